import { z } from 'zod/v4';
import type { InferenceEndpoint } from '../../shared/schemas';
import type { ModalView } from '../model';
import { ACTIONS, VIEWS } from './actions';
import { expectedInput, readSchemaForm, type SchemaFieldsForm } from '../../shared/input-schema';
import { escapeWithin, SLACK_LIMITS, section, truncate } from './format';
import {
	ADVANCED_BLOCK,
	advancedBlock,
	fieldBlock,
	fieldBlockId,
	fileBlock,
	fileBlockId,
	shownFields,
} from './job-fields';

/**
 * Block and action ids of the job form, read back by the view_submission listener. Choosing an
 * endpoint is an action of its own: the form is rebuilt with that endpoint's fields.
 */
export const JOB_FORM = {
	channel: { block: 'channel', action: 'value' },
	endpoint: { block: 'endpoint', action: ACTIONS.jobFormEndpoint },
	input: { block: 'input', action: 'value' },
	advanced: ADVANCED_BLOCK,
	metadata: { block: 'metadata', action: 'value' },
} as const;

/** A view takes 100 blocks (https://docs.slack.dev/reference/views/modal-views). */
const BLOCKS_PER_VIEW = 100;

/**
 * Where the form was opened; carried through Slack in `private_metadata`. Without a channel (the
 * global shortcut) the form asks where to post the job.
 */
export const jobFormContextSchema = z.strictObject({
	channel: z.string().min(1).optional(),
	endpoint: z.string().optional(),
});
export type JobFormContext = z.infer<typeof jobFormContextSchema>;

const title = { type: 'plain_text' as const, text: 'Run a GPU job' };

/** Opened at once (the trigger id lives ~3 s); replaced when the catalogue has loaded. */
export function loadingJobModal(context: JobFormContext): ModalView {
	return {
		type: 'modal',
		callback_id: VIEWS.jobModal,
		title,
		close: { type: 'plain_text', text: 'Cancel' },
		private_metadata: JSON.stringify(context),
		blocks: [section(':hourglass_flowing_sand: Loading the endpoint catalogue…')],
	};
}

export function unavailableJobModal(context: JobFormContext, detail: string): ModalView {
	return {
		...loadingJobModal(context),
		blocks: [section(`:x: The catalogue could not be loaded: ${escapeWithin(detail, 500)}`)],
	};
}

/** "Post in": the conversation the person was looking at, or another they choose. */
function channelPicker(): ModalView['blocks'][number] {
	return {
		type: 'input',
		block_id: JOB_FORM.channel.block,
		label: { type: 'plain_text', text: 'Post in' },
		hint: { type: 'plain_text', text: 'The job and its result go to a thread in this channel.' },
		element: {
			type: 'conversations_select',
			action_id: JOB_FORM.channel.action,
			default_to_current_conversation: true,
			filter: { include: ['public', 'private'], exclude_bot_users: true },
		},
	};
}

export function jobModal(context: JobFormContext, endpoints: InferenceEndpoint[]): ModalView {
	// A select offers 100 options: the endpoint the person named is always among them.
	const named = endpoints.filter((endpoint) => endpoint.name === context.endpoint);
	const listed = [...named, ...endpoints.filter((endpoint) => endpoint.name !== context.endpoint)]
		.slice(0, SLACK_LIMITS.staticSelectOptions)
		.sort((a, b) => endpoints.indexOf(a) - endpoints.indexOf(b));
	const options = listed.map((endpoint) => ({
		text: {
			type: 'plain_text' as const,
			text: truncate(`${endpoint.display_name} (${endpoint.name})`, SLACK_LIMITS.optionText),
		},
		value: endpoint.name,
	}));
	const initial = options.find((option) => option.value === context.endpoint);
	const unlisted =
		endpoints.length > listed.length
			? {
					hint: {
						type: 'plain_text' as const,
						text: `${listed.length} of ${endpoints.length} endpoints are listed; for another, type \`/gpu job <endpoint>\` (\`/gpu endpoints\` shows them all).`,
					},
				}
			: {};
	const chosen = endpoints.find((endpoint) => endpoint.name === context.endpoint);
	const form = chosen ? readSchemaForm(chosen.input_schema) : undefined;
	const metadataBlock: ModalView['blocks'][number] = {
		type: 'input',
		block_id: JOB_FORM.metadata.block,
		optional: true,
		label: { type: 'plain_text', text: 'Metadata (JSON object)' },
		hint: { type: 'plain_text', text: 'Optional; stored with the job.' },
		element: { type: 'plain_text_input', action_id: JOB_FORM.metadata.action, multiline: true },
	};
	const head = [
		...(context.channel ? [] : [channelPicker()]),
		{
			type: 'input' as const,
			block_id: JOB_FORM.endpoint.block,
			// Choosing an endpoint sends an action at once: the form is rebuilt with its fields.
			dispatch_action: true,
			label: { type: 'plain_text' as const, text: 'Endpoint' },
			...unlisted,
			element: {
				type: 'static_select' as const,
				action_id: JOB_FORM.endpoint.action,
				placeholder: { type: 'plain_text' as const, text: 'Choose an endpoint' },
				options,
				...(initial ? { initial_option: initial } : {}),
			},
		},
	];
	const room = BLOCKS_PER_VIEW - head.length - 1;
	const inputBlocks =
		form?.kind === 'fields'
			? fieldsBlocks(form, context.endpoint ?? '', room)
			: [jsonInputBlock(context.endpoint, chosen?.input_schema, form?.reason)];
	return {
		type: 'modal',
		callback_id: VIEWS.jobModal,
		title,
		submit: { type: 'plain_text', text: 'Run job' },
		close: { type: 'plain_text', text: 'Cancel' },
		private_metadata: JSON.stringify(context),
		blocks: [...head, ...inputBlocks, metadataBlock],
	};
}

/**
 * The endpoint's fields, as many as the view has room for (a note and the Advanced: JSON box take
 * two blocks); the others, and anything nested, go in Advanced: JSON.
 */
function fieldsBlocks(form: SchemaFieldsForm, endpoint: string, room: number): ModalView['blocks'] {
	const shown = shownFields(form.fields, room - 2);
	const blocks = shown.flatMap((field) => {
		const files = fileBlockId(field);
		const own = fieldBlock(field, fieldBlockId(field) ?? '');
		return files ? [own, fileBlock(field, files)] : [own];
	});
	const left = form.fields.length - shown.length;
	const note =
		left > 0
			? [
					section(
						`${shown.length} of the ${form.fields.length} fields of \`${escapeWithin(endpoint, 100)}\` are shown (required ones first); give any other in *Advanced: JSON*.`,
					),
				]
			: [];
	const advanced = advancedBlock(
		'Optional: a JSON object of other fields of the input; the fields above win over it.',
	);
	return [...blocks, ...note, advanced];
}

/** The whole input as JSON: no endpoint chosen yet, or a schema the form cannot show as fields. */
function jsonInputBlock(
	endpoint: string | undefined,
	inputSchema: string | undefined,
	reason: string | undefined,
): ModalView['blocks'][number] {
	const expects = expectedInput(inputSchema);
	const hint = !endpoint
		? 'The JSON the endpoint accepts; choose an endpoint to get its fields instead.'
		: [reason, expects ? `${endpoint} expects: ${expects}` : undefined].filter(Boolean).join(' ') ||
			'The JSON the endpoint accepts; `/gpu endpoints` shows what each one expects.';
	return {
		type: 'input',
		block_id: JOB_FORM.input.block,
		label: { type: 'plain_text', text: 'Input (JSON)' },
		hint: { type: 'plain_text', text: truncate(hint, 2000) },
		element: {
			type: 'plain_text_input',
			action_id: JOB_FORM.input.action,
			multiline: true,
			placeholder: { type: 'plain_text', text: '{"prompt": "hello"}' },
		},
	};
}
