import type { Logger, webApi } from '@slack/bolt';
import {
	jobModal,
	JOB_FORM,
	jobFormContextSchema,
	loadingJobModal,
	unavailableJobModal,
	type JobFormContext,
} from '../messages/modal';
import { inputProblem, type Catalogue } from './catalogue';
import { parseJsonInput } from './command-parser';
import { describeError, errorSummary } from '../slack/errors';
import { userMetadataProblem } from '../state/job-metadata';

type WebClient = webApi.WebClient;

/** What the person filled in, read from `view.state.values`. */
export interface JobFormValues {
	/** Chosen in the form when it was opened outside a channel. */
	channel?: string;
	endpoint?: string;
	input?: string;
	metadata?: string;
}

export type JobFormResult =
	| {
			ok: true;
			context: JobFormContext & { channel: string };
			endpoint: string;
			input: unknown;
			metadata?: Record<string, unknown>;
	  }
	| { ok: false; errors: Record<string, string> };

function record(value: unknown): Record<string, unknown> | undefined {
	return value && typeof value === 'object' && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: undefined;
}

/** Reads the three fields of the form out of Slack's nested state. */
export function readJobFormValues(state: unknown): JobFormValues {
	const values = record(record(state)?.values);
	const field = (block: string, action: string) => record(record(values?.[block])?.[action]);
	const endpoint = record(
		field(JOB_FORM.endpoint.block, JOB_FORM.endpoint.action)?.selected_option,
	)?.value;
	const input = field(JOB_FORM.input.block, JOB_FORM.input.action)?.value;
	const metadata = field(JOB_FORM.metadata.block, JOB_FORM.metadata.action)?.value;
	const channel = field(JOB_FORM.channel.block, JOB_FORM.channel.action)?.selected_conversation;
	return {
		channel: typeof channel === 'string' && channel ? channel : undefined,
		endpoint: typeof endpoint === 'string' ? endpoint : undefined,
		input: typeof input === 'string' ? input : undefined,
		metadata: typeof metadata === 'string' ? metadata : undefined,
	};
}

/** `/gpu job <endpoint>` without input: a form with the catalogue as a picker and a checked JSON box. */
export class JobForm {
	constructor(
		private readonly catalogue: Catalogue,
		private readonly logger: Logger,
	) {}

	/** Opens at once (trigger ids expire in ~3 s), then fills in the catalogue. */
	async open(client: WebClient, triggerId: string, context: JobFormContext): Promise<void> {
		const opened = await client.views.open({
			trigger_id: triggerId,
			view: loadingJobModal(context),
		});
		const viewId = opened.view?.id;
		if (!viewId) return;
		let view;
		try {
			view = jobModal(context, await this.catalogue.all());
		} catch (error) {
			this.logger.warn(`Could not load the catalogue for the job form: ${errorSummary(error)}`);
			view = unavailableJobModal(context, describeError(error));
		}
		await client.views.update({ view_id: viewId, hash: opened.view?.hash, view });
	}

	/** Checks a submission; field errors are shown under the fields and nothing is created. */
	async check(privateMetadata: string | undefined, values: JobFormValues): Promise<JobFormResult> {
		let context: JobFormContext;
		try {
			const parsed = jobFormContextSchema.safeParse(JSON.parse(privateMetadata ?? ''));
			if (!parsed.success)
				return {
					ok: false,
					errors: {
						[JOB_FORM.input.block]: 'This form is out of date; open it again with /gpu job.',
					},
				};
			context = parsed.data;
		} catch {
			return {
				ok: false,
				errors: {
					[JOB_FORM.input.block]: 'This form is out of date; open it again with /gpu job.',
				},
			};
		}
		const errors: Record<string, string> = {};
		const channel = context.channel ?? values.channel;
		if (!channel) errors[JOB_FORM.channel.block] = 'Choose the channel to post the job in.';
		if (!values.endpoint) errors[JOB_FORM.endpoint.block] = 'Choose an endpoint.';
		const input = parseJsonInput(values.input ?? '');
		if (!values.input?.trim()) errors[JOB_FORM.input.block] = 'Enter the job input as JSON.';
		else if (!input.ok) errors[JOB_FORM.input.block] = input.problem;
		let metadata: Record<string, unknown> | undefined;
		if (values.metadata?.trim()) {
			const parsed = parseJsonInput(values.metadata);
			const problem = parsed.ok
				? userMetadataProblem(parsed.value)
				: parsed.problem.replace('The input', 'The metadata');
			if (problem) errors[JOB_FORM.metadata.block] = problem;
			else if (parsed.ok) metadata = record(parsed.value);
		}
		if (values.endpoint && !errors[JOB_FORM.endpoint.block]) {
			try {
				const endpoint = await this.catalogue.find(values.endpoint);
				if (!endpoint)
					errors[JOB_FORM.endpoint.block] = `There is no endpoint "${values.endpoint}" any more.`;
				const problem = endpoint && input.ok ? inputProblem(endpoint, input.value) : undefined;
				if (problem) errors[JOB_FORM.input.block] = problem;
			} catch (error) {
				errors[JOB_FORM.endpoint.block] =
					`The endpoint could not be checked: ${describeError(error)}`;
			}
		}
		if (Object.keys(errors).length > 0 || !channel || !values.endpoint || !input.ok)
			return { ok: false, errors };
		return {
			ok: true,
			context: { ...context, channel },
			endpoint: values.endpoint,
			input: input.value,
			metadata,
		};
	}
}
