import { z } from 'zod/v4';
import type { InferenceEndpoint } from '../../shared/schemas';
import type { ModalView } from '../model';
import { VIEWS } from './actions';
import { expectedInput } from '../../shared/input-schema';
import { escapeWithin, SLACK_LIMITS, section, truncate } from './format';

/** Block and action ids of the job form, read back by the view_submission listener. */
export const JOB_FORM = {
	channel: { block: 'channel', action: 'value' },
	endpoint: { block: 'endpoint', action: 'value' },
	input: { block: 'input', action: 'value' },
	metadata: { block: 'metadata', action: 'value' },
} as const;

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
	const expects = expectedInput(
		endpoints.find((endpoint) => endpoint.name === context.endpoint)?.input_schema,
	);
	return {
		type: 'modal',
		callback_id: VIEWS.jobModal,
		title,
		submit: { type: 'plain_text', text: 'Run job' },
		close: { type: 'plain_text', text: 'Cancel' },
		private_metadata: JSON.stringify(context),
		blocks: [
			...(context.channel ? [] : [channelPicker()]),
			{
				type: 'input',
				block_id: JOB_FORM.endpoint.block,
				label: { type: 'plain_text', text: 'Endpoint' },
				...unlisted,
				element: {
					type: 'static_select',
					action_id: JOB_FORM.endpoint.action,
					placeholder: { type: 'plain_text', text: 'Choose an endpoint' },
					options,
					...(initial ? { initial_option: initial } : {}),
				},
			},
			{
				type: 'input',
				block_id: JOB_FORM.input.block,
				label: { type: 'plain_text', text: 'Input (JSON)' },
				hint: {
					type: 'plain_text',
					text: expects
						? truncate(`${context.endpoint} expects: ${expects}`, 2000)
						: 'The JSON the endpoint accepts; `/gpu endpoints` shows what each one expects.',
				},
				element: {
					type: 'plain_text_input',
					action_id: JOB_FORM.input.action,
					multiline: true,
					placeholder: { type: 'plain_text', text: '{"prompt": "hello"}' },
				},
			},
			{
				type: 'input',
				block_id: JOB_FORM.metadata.block,
				optional: true,
				label: { type: 'plain_text', text: 'Metadata (JSON object)' },
				hint: { type: 'plain_text', text: 'Optional; stored with the job.' },
				element: { type: 'plain_text_input', action_id: JOB_FORM.metadata.action, multiline: true },
			},
		],
	};
}
