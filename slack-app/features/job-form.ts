import { z } from 'zod/v4';
import type { Logger, webApi } from '@slack/bolt';
import {
	jobModal,
	JOB_FORM,
	jobFormContextSchema,
	loadingJobModal,
	unavailableJobModal,
	type JobFormContext,
} from '../messages/modal';
import { inputFromFields, readSchemaForm, type SchemaFieldsForm } from '../../shared/input-schema';
import {
	FIELD_BLOCK_PREFIX,
	FIELD_ACTION,
	FILE_ACTION,
	FILE_BLOCK_PREFIX,
} from '../messages/job-fields';
import {
	mediaFileProblem,
	NO_FORM_FILE_ROUTE,
	type AttachedFile,
	type FileTranscription,
} from './file-transcription';
import type { PreparedInput } from './jobs';
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
	/** The endpoint's fields, by property name: text, a number as text, a choice, or a yes/no. */
	fields: Record<string, unknown>;
	/** The ids of the files attached in media fields' file inputs, by property name. */
	files: Record<string, string[]>;
	/** Whether the form showed the endpoint's fields (and Advanced: JSON) rather than one JSON box. */
	byFields: boolean;
	/** Advanced: JSON, beside the fields. */
	advanced?: string;
	metadata?: string;
}

export type JobFormResult =
	| {
			ok: true;
			context: JobFormContext & { channel: string };
			endpoint: string;
			input: unknown;
			metadata?: Record<string, unknown>;
			/** Makes the input with the attached files' links, for the job about to be created. */
			prepare?: () => Promise<PreparedInput>;
	  }
	| { ok: false; errors: Record<string, string> };

function record(value: unknown): Record<string, unknown> | undefined {
	return value && typeof value === 'object' && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: undefined;
}

/** What one field's element holds in Slack's view state. */
function fieldValue(element: Record<string, unknown> | undefined): unknown {
	if (!element) return undefined;
	if (element.type === 'checkboxes')
		return Array.isArray(element.selected_options) && element.selected_options.length > 0;
	if (element.type === 'static_select') return record(element.selected_option)?.value;
	return element.value;
}

/** A file input's state: the files attached (Slack's file objects; the id is what counts). */
const fileInputSchema = z.object({
	files: z.array(z.looseObject({ id: z.string().min(1) })).default([]),
});

/** Reads the form's fields out of Slack's nested state. */
export function readJobFormValues(state: unknown): JobFormValues {
	const values = record(record(state)?.values);
	const field = (block: string, action: string) => record(record(values?.[block])?.[action]);
	const endpoint = record(
		field(JOB_FORM.endpoint.block, JOB_FORM.endpoint.action)?.selected_option,
	)?.value;
	const input = field(JOB_FORM.input.block, JOB_FORM.input.action)?.value;
	const metadata = field(JOB_FORM.metadata.block, JOB_FORM.metadata.action)?.value;
	const channel = field(JOB_FORM.channel.block, JOB_FORM.channel.action)?.selected_conversation;
	const advanced = field(JOB_FORM.advanced.block, JOB_FORM.advanced.action)?.value;
	const fields: Record<string, unknown> = {};
	const files: Record<string, string[]> = {};
	for (const block of Object.keys(values ?? {})) {
		if (block.startsWith(FIELD_BLOCK_PREFIX))
			fields[block.slice(FIELD_BLOCK_PREFIX.length)] = fieldValue(field(block, FIELD_ACTION));
		const attached = block.startsWith(FILE_BLOCK_PREFIX)
			? fileInputSchema.safeParse(field(block, FILE_ACTION) ?? {})
			: undefined;
		if (attached?.success)
			files[block.slice(FILE_BLOCK_PREFIX.length)] = attached.data.files.map(({ id }) => id);
	}
	return {
		channel: typeof channel === 'string' && channel ? channel : undefined,
		endpoint: typeof endpoint === 'string' ? endpoint : undefined,
		input: typeof input === 'string' ? input : undefined,
		fields,
		files,
		byFields:
			Object.keys(fields).length > 0 || record(values?.[JOB_FORM.advanced.block]) !== undefined,
		advanced: typeof advanced === 'string' ? advanced : undefined,
		metadata: typeof metadata === 'string' ? metadata : undefined,
	};
}

/** "This field must be at least 20." on a field's block; the path where it is nested. */
function fieldError(path: string, field: string, rule: string): string {
	return path === field ? `This field ${rule}.` : `${path} ${rule}.`;
}

/**
 * A checkbox cannot say "not set": an unticked box is `false` only where that differs from leaving
 * the field out (a required field, or one whose default is true); elsewhere it is left out, as the
 * endpoint's own default applies, so the input matches what `/gpu` commands send.
 */
function uncheckedAsUnset(
	form: SchemaFieldsForm,
	fields: Record<string, unknown>,
): Record<string, unknown> {
	const values = { ...fields };
	for (const field of form.fields)
		if (
			field.kind === 'boolean' &&
			values[field.name] === false &&
			!field.required &&
			field.default !== true
		)
			delete values[field.name];
	return values;
}

/**
 * The input the form's fields make, or the errors to show on the blocks that caused them: each
 * problem on its field's block, problems of fields without a block (and of the whole input) on
 * Advanced: JSON.
 */
function inputOfFields(
	form: SchemaFieldsForm,
	values: JobFormValues,
): { ok: true; input: Record<string, unknown> } | { ok: false; errors: Record<string, string> } {
	let base: Record<string, unknown> = {};
	if (values.advanced?.trim()) {
		const parsed = parseJsonInput(values.advanced);
		const object = parsed.ok ? record(parsed.value) : undefined;
		if (!object)
			return {
				ok: false,
				errors: {
					[JOB_FORM.advanced.block]: parsed.ok
						? 'Advanced: JSON must be a JSON object of fields.'
						: parsed.problem.replace('The input', 'Advanced: JSON'),
				},
			};
		base = object;
	}
	const { input, issues } = inputFromFields(form, uncheckedAsUnset(form, values.fields), base);
	if (issues.length === 0) return { ok: true, input };
	const errors: Record<string, string> = {};
	for (const { path, rule } of issues) {
		const name = path.split(/[.[]/)[0];
		const block = name in values.fields ? `${FIELD_BLOCK_PREFIX}${name}` : JOB_FORM.advanced.block;
		errors[block] ??=
			block === JOB_FORM.advanced.block
				? `${path === '' ? 'The input' : path} ${rule}.`
				: fieldError(path, name, rule);
	}
	return { ok: false, errors };
}

function isBlankValue(value: unknown): boolean {
	return (
		value === undefined || value === null || (typeof value === 'string' && value.trim() === '')
	);
}

/** Files attached in the form, checked: those the job reads, and the errors of the others by block. */
interface CheckedFiles {
	attached: AttachedFile[];
	errors: Record<string, string>;
}

const REQUIRED = 'This field is required.';

/**
 * The field errors, said for a form with file inputs: a required media field left empty takes a URL
 * or a file; one whose file was attached (and refused, on its own block) is not also "required".
 */
function withFileHints(
	errors: Record<string, string>,
	form: SchemaFieldsForm,
	values: JobFormValues,
): Record<string, string> {
	const said = { ...errors };
	for (const field of form.fields) {
		const block = `${FIELD_BLOCK_PREFIX}${field.name}`;
		if (!field.media || said[block] !== REQUIRED || !(field.name in values.files)) continue;
		if ((values.files[field.name] ?? []).length > 0) delete said[block];
		else said[block] = 'This field is required: give a URL, or attach a file below.';
	}
	return said;
}

/** `/gpu job <endpoint>` without input: a form with the catalogue as a picker and a checked JSON box. */
export class JobForm {
	constructor(
		private readonly catalogue: Catalogue,
		private readonly logger: Logger,
		private readonly files: FileTranscription,
	) {}

	/**
	 * The files attached to media fields, each checked as the shortcut checks a shared file (what
	 * Slack says it is, the spec's limits, whether the bot sees it, whether the app can hand it over)
	 * before any job; an error goes on the file's block.
	 */
	private async checkFiles(form: SchemaFieldsForm, values: JobFormValues): Promise<CheckedFiles> {
		const checked: CheckedFiles = { attached: [], errors: {} };
		for (const [name, ids] of Object.entries(values.files)) {
			if (ids.length === 0) continue;
			const block = `${FILE_BLOCK_PREFIX}${name}`;
			const refuse = (problem: string) => (checked.errors[block] = problem);
			const accept = form.fields.find((field) => field.name === name)?.media;
			if (!accept)
				refuse('This field takes no file: choose the endpoint again to reload the form.');
			else if (ids.length > 1) refuse('Attach one file: a job reads one file here.');
			else if (!isBlankValue(values.fields[name])) refuse('Give a URL or attach a file, not both.');
			else if (!this.files.canSend) refuse(NO_FORM_FILE_ROUTE);
			else {
				const seen = await this.files.see(ids[0]);
				if ('problem' in seen)
					refuse(
						seen.failed ? `Reading the file from Slack failed: ${seen.problem}` : seen.problem,
					);
				else {
					const problem = mediaFileProblem(seen.file, accept);
					if (problem) refuse(problem);
					else checked.attached.push({ field: name, file: seen.file });
				}
			}
		}
		return checked;
	}

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

	/**
	 * The person chose an endpoint: the form is rebuilt with that endpoint's fields (Slack keeps what
	 * was typed in blocks that stay). A form changed meanwhile (`hash`) is left as it is.
	 */
	async chooseEndpoint(
		client: WebClient,
		view: { id: string; hash: string; privateMetadata: string },
		endpoint: string,
	): Promise<void> {
		let context: JobFormContext;
		try {
			const parsed = jobFormContextSchema.safeParse(JSON.parse(view.privateMetadata));
			if (!parsed.success) return;
			context = parsed.data;
		} catch {
			return;
		}
		let endpoints;
		try {
			endpoints = await this.catalogue.all();
		} catch (error) {
			this.logger.warn(`Could not load the catalogue for the job form: ${errorSummary(error)}`);
			return;
		}
		try {
			await client.views.update({
				view_id: view.id,
				hash: view.hash,
				view: jobModal({ ...context, endpoint }, endpoints),
			});
		} catch (error) {
			this.logger.warn(
				`Could not show the fields of endpoint "${endpoint}": ${errorSummary(error)}`,
			);
		}
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
		const { byFields } = values;
		let input: { ok: true; value: unknown } | { ok: false; problem: string } = parseJsonInput(
			values.input ?? '',
		);
		if (byFields) input = { ok: false, problem: '' };
		else if (!values.input?.trim()) errors[JOB_FORM.input.block] = 'Enter the job input as JSON.';
		else if (!input.ok) errors[JOB_FORM.input.block] = input.problem;
		let metadata: Record<string, unknown> | undefined;
		let prepare: (() => Promise<PreparedInput>) | undefined;
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
				else if (byFields) {
					const form = readSchemaForm(endpoint.input_schema);
					if (values.endpoint !== context.endpoint || form.kind !== 'fields')
						errors[JOB_FORM.endpoint.block] =
							`The fields below are not those of "${values.endpoint}" any more: choose it again to reload them.`;
					else {
						const files = await this.checkFiles(form, values);
						// An attached file stands for its field's URL while the rest is checked; its
						// link is made when the job is.
						const filled = { ...values.fields };
						for (const { field, file } of files.attached) filled[field] = file.source;
						const made = inputOfFields(form, { ...values, fields: filled });
						if (made.ok) {
							input = { ok: true, value: made.input };
							if (files.attached.length > 0)
								prepare = this.files.linkedInput(made.input, files.attached);
						} else Object.assign(errors, withFileHints(made.errors, form, values));
						Object.assign(errors, files.errors);
					}
				}
				const problem =
					endpoint && !byFields && input.ok ? inputProblem(endpoint, input.value) : undefined;
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
			prepare,
		};
	}
}
