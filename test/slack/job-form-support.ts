import { JOB_FORM } from '../../slack-app/messages/modal';
import { FIELD_BLOCK_PREFIX } from '../../slack-app/messages/job-fields';
import type { Stack } from './harness';

/**
 * The job form as a person uses it through the stand-in: open it, choose an endpoint (the app
 * rebuilds the view), fill some blocks and submit the view's whole state, as Slack sends it.
 */

export type Block = {
	type: string;
	block_id?: string;
	optional?: boolean;
	label?: { text: string };
	hint?: { text: string };
	element?: Record<string, unknown> & { type: string; options?: unknown[] };
	text?: { text: string };
};

/** Opens the job form as a person does (`/gpu job`, or `text`) and returns it once it lists the catalogue. */
export async function openForm(stack: Stack, user: string, channel: string, text = 'job') {
	await stack.command(text, user, channel);
	return stack.standin.waitFor(
		() =>
			[...stack.standin.workspace.views.values()].find(
				(view) => view.user === user && JSON.stringify(view.view).includes('static_select'),
			),
		10_000,
		'the job form with the catalogue',
	);
}

/** Chooses an endpoint as a person does (a block action from the view) and returns the rebuilt form. */
export async function choose(stack: Stack, user: string, viewId: string, endpoint: string) {
	const reply = await stack.standin.app.selectInView({
		user,
		viewId,
		blockId: JOB_FORM.endpoint.block,
		actionId: JOB_FORM.endpoint.action,
		option: { value: endpoint, text: endpoint },
	});
	expect(reply.status).toBe(200);
	await stack.app.idle();
	const refused = stack.standin.api.callsOf('views.update').filter((call) => call.error);
	expect(refused.map((call) => call.error)).toEqual([]);
	const view = stack.standin.workspace.views.get(viewId);
	if (!view || !String(view.view.private_metadata).includes(endpoint))
		throw new Error(`the form was not rebuilt for ${endpoint}`);
	return { id: view.id, blocks: view.view.blocks as Block[] };
}

export function fieldBlocks(blocks: Block[]): Map<string, Block> {
	return new Map(
		blocks
			.filter((block) => block.block_id?.startsWith(FIELD_BLOCK_PREFIX))
			.map((block) => [block.block_id!.slice(FIELD_BLOCK_PREFIX.length), block]),
	);
}

export const text = (value: string | null) => ({ type: 'plain_text_input', value });
export const number = (value: string | null) => ({ type: 'number_input', value });
export const url = (value: string | null) => ({ type: 'url_text_input', value });
export const select = (value: string | null) => ({
	type: 'static_select',
	selected_option: value ? { value, text: { type: 'plain_text', text: value } } : null,
});
export const checkbox = (checked: boolean) => ({
	type: 'checkboxes',
	selected_options: checked ? [{ value: 'true', text: { type: 'plain_text', text: 'Yes' } }] : [],
});

/** An untouched element's state: what it starts with (a default), as Slack reports it. */
function untouched(element: Record<string, unknown> & { type: string }): Record<string, unknown> {
	if (element.type === 'static_select')
		return { type: element.type, selected_option: element.initial_option ?? null };
	if (element.type === 'checkboxes')
		return { type: element.type, selected_options: element.initial_options ?? [] };
	if (element.type === 'file_input') return { type: element.type, files: [] };
	return { type: element.type, value: element.initial_value ?? null };
}

/** The view's state as Slack sends it on submit: every input block, filled or as it started. */
export function stateOf(
	blocks: Block[],
	filled: Record<string, Record<string, unknown>>,
): Record<string, Record<string, unknown>> {
	const values: Record<string, Record<string, unknown>> = {};
	for (const block of blocks) {
		if (block.type !== 'input' || !block.block_id || !block.element) continue;
		const action = String(block.element.action_id);
		values[block.block_id] = filled[block.block_id] ?? { [action]: untouched(block.element) };
	}
	return values;
}

export const field = (name: string) => `${FIELD_BLOCK_PREFIX}${name}`;

/** The jobs created on an endpoint so far. */
export function jobsOn(stack: Stack, endpoint: string) {
	return stack.emulator
		.jobsOf(stack.emulator.organization)
		.filter((job) => job.inference_endpoint_name === endpoint);
}

/** The next job created on an endpoint (the job is created after the form closes). */
export function nextJob(stack: Stack, endpoint: string, before: number) {
	return stack.standin.waitFor(
		() => jobsOn(stack, endpoint)[before],
		10_000,
		`a job on ${endpoint}`,
	);
}
