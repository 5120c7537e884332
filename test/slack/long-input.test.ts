import { SHORTCUTS } from '../../slack-app/messages/actions';
import { ASK_FORM } from '../../slack-app/messages/ask';
import type { ApiCall } from '../../slack-standin/web-api';
import { eventually } from '../support/eventually';
import { Stack } from './harness';

/**
 * Long but ordinary input through every surface, with signed requests from the stand-in, which
 * refuses what Slack refuses (slack-standin/limits.ts). Nothing the app sends may be refused
 * or cut by Slack, and what the app shortens says so.
 */

/** Calls Slack would refuse for a limit, or cut with a warning. */
function overLimit(calls: ApiCall[]): string[] {
	return calls
		.filter(
			(call) =>
				(call.error !== undefined &&
					/^(invalid_blocks|invalid_arguments|msg_too_long|msg_blocks_too_long|msg_blocks_too_many|alt_txt_too_large|view_too_large)$/.test(
						call.error,
					)) ||
				(call.warnings?.length ?? 0) > 0,
		)
		.map((call) => `${call.method}: ${call.error ?? call.warnings?.join(', ')}`);
}

/** Polls: the stand-in's call log changes without a workspace event. */
const until = (done: () => boolean, what: string, timeoutMs = 10_000) =>
	eventually(what, done, { timeoutMs, intervalMs: 50 });

/** A pasted CSV: quotes and line breaks, which JSON escaping makes longer. */
function csv(characters: number): string {
	const rows = ['"region","gpu","hours","cost"'];
	for (let i = 0; rows.join('\n').length < characters; i++)
		rows.push(`"eu-west-${i % 3}","A100 ""80GB""","${i}","${(i * 1.7).toFixed(2)}"`);
	return rows.join('\n').slice(0, characters);
}

describe('long but ordinary input stays within what Slack accepts', () => {
	let stack: Stack;
	beforeAll(async () => {
		stack = await Stack.start();
	});
	afterAll(() => stack.close());

	it('"Ask GPU Cloud about this message" on a 3,800-character CSV opens the form and says what it quotes', async () => {
		const channel = 'C0LONGASK';
		const message = stack.standin.workspace.post({
			channel,
			user: 'U0PASTER',
			text: csv(3800),
		});
		await stack.standin.app.messageShortcut('U0LONGASK', SHORTCUTS.askAboutMessage, message);
		await until(() => stack.standin.api.callsOf('views.open').length > 0, 'views.open');
		expect(overLimit(stack.standin.api.calls)).toEqual([]);
		const view = await stack.standin.waitFor(
			() => [...stack.standin.workspace.views.values()].find((open) => open.user === 'U0LONGASK'),
			10_000,
			'the ask form',
		);
		expect(JSON.stringify(view.view.blocks)).toMatch(/first [\d,]+ of 3,800 characters/);

		const values = {
			[ASK_FORM.question.block]: {
				[ASK_FORM.question.action]: { type: 'plain_text_input', value: 'Which region costs most?' },
			},
		};
		const reply = await stack.standin.app.submitView({
			user: 'U0LONGASK',
			viewId: view.id,
			values,
		});
		expect(reply.body.trim()).toBe('');
		const parent = await stack.waitForParent(1, channel);
		await stack.waitForParentText(parent.ts, /Which region costs most/, 10_000, channel);
		expect(overLimit(stack.standin.api.calls)).toEqual([]);
	});

	it('/gpu image with a 1,500-character prompt uploads its images with alt text and titles Slack takes', async () => {
		const channel = 'C0LONGIMG';
		const prompt =
			`a watercolour of ${'a quiet harbour at dawn with fishing boats, '.repeat(40)}`.slice(
				0,
				1500,
			);
		await stack.command(`image ${prompt} --count 2`, 'U0PAINTER', channel);
		const parent = await stack.waitForParent(1, channel);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, channel);
		await stack.app.idle();
		expect(overLimit(stack.standin.api.calls)).toEqual([]);
		const files = stack
			.replies(parent.ts, channel)
			.flatMap((reply) => reply.fileIds)
			.map((id) => stack.standin.workspace.files.get(id));
		expect(files).toHaveLength(2);
		for (const file of files) {
			expect(file?.altText?.length).toBeLessThanOrEqual(1000);
			expect(file?.altText).toMatch(/…$/);
			expect(file?.title.length).toBeLessThanOrEqual(120);
		}
	});
});
