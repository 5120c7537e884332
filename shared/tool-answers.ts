import { parseInputSchema, summarizeInputSchema } from './input-schema';
import { LIMITS, NAME_RULE } from './schemas/common';
import type { InferenceEndpoint } from './schemas/endpoint';
import type { Job } from './schemas/job';

/**
 * Answers sized for a language model: what the n8n node returns when an AI agent (or an MCP client
 * behind n8n's MCP Server Trigger) calls it as a tool, and what any other front end that hands
 * GPU Cloud data to a model can reuse. A model reads the whole answer on every turn that follows,
 * so each answer keeps what a model acts on and is held to a written budget.
 */

/**
 * The most one tool answer may take, in UTF-8 bytes of its JSON (what n8n sends the model): 16 KB
 * is about 4,000 tokens, a small share of any current model's context, paid again on every turn.
 */
export const TOOL_ANSWER_MAX_BYTES = 16 * 1024;

/**
 * A job's output longer than this (UTF-8 bytes of its JSON) is cut in a tool answer: half the
 * answer budget, so the job's other fields and the note on how to read on always fit.
 */
export const TOOL_JOB_OUTPUT_MAX_BYTES = 8 * 1024;

/** A catalogue entry's description: one line, as a list shows it. */
export const TOOL_DESCRIPTION_MAX_CHARS = 160;

/** A catalogue entry's summary of what its input takes. */
export const TOOL_INPUT_SUMMARY_MAX_CHARS = 200;

const encoder = new TextEncoder();

export function utf8Bytes(text: string): number {
	return encoder.encode(text).length;
}

/** The size of an answer as n8n hands it to the model: the JSON of its output items. */
export function answerBytes(answer: object): number {
	return utf8Bytes(JSON.stringify([answer]));
}

/** The longest start of `text` within `maxBytes` of UTF-8, never splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
	return longestPrefix(text, (prefix) => utf8Bytes(prefix) <= maxBytes);
}

/** The first line of a text, cut at `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
	const line = text.split(/\r?\n/, 1)[0]?.trim() ?? '';
	return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}

/** One endpoint of the catalogue as a model needs it to choose one. */
export interface CatalogueEntry {
	name: string;
	displayName: string;
	description: string;
	price: string;
	/** What the input takes (top-level fields), from the published input_schema. */
	input?: string;
}

export function catalogueEntry(endpoint: InferenceEndpoint): CatalogueEntry {
	const input = summarizeInputSchema(
		parseInputSchema(endpoint.input_schema),
		TOOL_INPUT_SUMMARY_MAX_CHARS,
	);
	return {
		name: endpoint.name,
		displayName: endpoint.display_name,
		description: oneLine(endpoint.description, TOOL_DESCRIPTION_MAX_CHARS),
		price: endpoint.price_description,
		...(input ? { input } : {}),
	};
}

export interface CatalogueAnswer {
	/** Endpoints read from the catalogue. */
	total: number;
	endpoints: CatalogueEntry[];
	/** The names of the endpoints whose details did not fit the budget. */
	otherEndpoints?: string[];
	note: string;
}

const FULL_ENDPOINT_HINT =
	'Inference Endpoint > Get with an endpoint name returns that endpoint in full (its input schema, readme and output schema).';

/**
 * The catalogue within the answer budget: every endpoint in detail when they fit; otherwise the
 * first ones in detail and the rest by name (a model finds an endpoint by its name and reads it
 * in full with Inference Endpoint > Get); names that still do not fit are counted in the note.
 */
export function catalogueAnswer(
	endpoints: readonly InferenceEndpoint[],
	maxBytes = TOOL_ANSWER_MAX_BYTES,
): CatalogueAnswer {
	const entries = endpoints.map(catalogueEntry);
	const whole: CatalogueAnswer = {
		total: entries.length,
		endpoints: entries,
		note: FULL_ENDPOINT_HINT,
	};
	if (answerBytes(whole) <= maxBytes) return whole;
	const names = entries.map((entry) => entry.name);
	const build = (detailed: number, named: number): CatalogueAnswer => {
		const unlisted = entries.length - detailed - named;
		return {
			total: entries.length,
			endpoints: entries.slice(0, detailed),
			otherEndpoints: names.slice(detailed, detailed + named),
			note:
				`${entries.length} endpoints: the first ${detailed} in detail, ${named} more by name only` +
				(unlisted > 0 ? `, ${unlisted} more not listed` : '') +
				`. ${FULL_ENDPOINT_HINT}`,
		};
	};
	const allNamed = (detailed: number) => build(detailed, entries.length - detailed);
	if (answerBytes(allNamed(0)) <= maxBytes) {
		// The most endpoints in detail such that every other one still fits by name.
		const detailed = largest(
			entries.length - 1,
			(count) => answerBytes(allNamed(count)) <= maxBytes,
		);
		return allNamed(detailed);
	}
	const named = largest(entries.length, (count) => answerBytes(build(0, count)) <= maxBytes);
	return build(0, named);
}

/** One endpoint in full, for a model about to create a job on it. */
export interface EndpointAnswer {
	name: string;
	displayName: string;
	description: string;
	price: string;
	/** The published JSON Schema of the job input, parsed when it is JSON. */
	inputSchema: unknown;
	outputSchema?: unknown;
	readme?: string;
	note?: string;
}

function schemaValue(text: string): unknown {
	return parseInputSchema(text) ?? text;
}

/** The largest count from 0 to `upTo` that `fits` (which must hold for every smaller count too). */
function largest(upTo: number, fits: (count: number) => boolean): number {
	let low = 0;
	let high = upTo;
	while (low < high) {
		const middle = Math.ceil((low + high) / 2);
		if (fits(middle)) low = middle;
		else high = middle - 1;
	}
	return low;
}

/** The longest prefix of `text` that `fits` (which must hold for every shorter prefix too). */
function longestPrefix(text: string, fits: (prefix: string) => boolean): string {
	const low = largest(text.length, (length) => fits(text.slice(0, length)));
	// A cut between the halves of a surrogate pair would leave half a character.
	const last = text.charCodeAt(low - 1);
	return text.slice(0, last >= 0xd800 && last <= 0xdbff ? low - 1 : low);
}

/** The longest prefix of `text` for which `build(prefix)` stays within the answer budget. */
function longestFitting(text: string, build: (part: string) => object, maxBytes: number): string {
	return longestPrefix(text, (prefix) => answerBytes(build(prefix)) <= maxBytes);
}

/**
 * An endpoint in full within the budget. The input schema matters most (a job's input must match
 * it), the readme least: over budget, the readme is cut first, then the output schema is left out.
 * An input schema that alone is over budget is cut as text.
 */
export function endpointAnswer(
	endpoint: InferenceEndpoint,
	maxBytes = TOOL_ANSWER_MAX_BYTES,
): EndpointAnswer {
	const answer: EndpointAnswer = {
		name: endpoint.name,
		displayName: endpoint.display_name,
		description: endpoint.description,
		price: endpoint.price_description,
		inputSchema: schemaValue(endpoint.input_schema),
		outputSchema: schemaValue(endpoint.output_schema),
		readme: endpoint.readme,
	};
	if (answerBytes(answer) <= maxBytes) return answer;
	const note = (what: string) =>
		`Cut to fit a tool answer of ${maxBytes} bytes: ${what}. A run of this operation outside a tool returns everything.`;
	const withReadme = (readme: string): EndpointAnswer => ({
		...answer,
		readme,
		note: note(`the readme (${endpoint.readme.length} characters) is cut`),
	});
	if (answerBytes(withReadme('')) <= maxBytes)
		return withReadme(longestFitting(endpoint.readme, withReadme, maxBytes));
	const { readme: _readme, outputSchema: _outputSchema, ...rest } = answer;
	const lean: EndpointAnswer = {
		...rest,
		note: note('the readme and the output schema are left out'),
	};
	if (answerBytes(lean) <= maxBytes) return lean;
	const withSchemaText = (inputSchema: string): EndpointAnswer => ({
		...lean,
		inputSchema,
		note: note(
			'the readme and the output schema are left out, and the input schema is cut, as text',
		),
	});
	return withSchemaText(longestFitting(endpoint.input_schema, withSchemaText, maxBytes));
}

/** A job as a model needs it: what it is, how it went, when, and its output (cut when large). */
export interface JobAnswer {
	id: string;
	endpoint: string;
	status: Job['status'];
	createdAt: string;
	startedAt?: string;
	finishedAt?: string;
	runSeconds?: number;
	output?: unknown;
	/** The output's JSON text from `outputOffset`, cut at the budget. */
	outputPart?: string;
	outputOffset?: number;
	outputLength?: number;
	error?: string;
	note?: string;
}

function eventTime(job: Job, actions: readonly string[]): string | undefined {
	return job.events.find((event) => actions.includes(event.action))?.time;
}

/** Why a job did not succeed, in a sentence: its output's `error`, else what its status says. */
export function jobFailureReason(job: Job): string | undefined {
	const output = job.output;
	if (output && typeof output === 'object' && 'error' in output && typeof output.error === 'string')
		return output.error;
	if (job.status === 'cancelled') return 'The job was cancelled.';
	if (job.status === 'failed') return 'The job failed without giving a reason.';
	return undefined;
}

/**
 * A job within the budget. Its input is left out (the model gave it). An output whose JSON is
 * over `maxOutputBytes` comes as a part of that JSON text, from `outputOffset` (characters), with
 * a note naming the offset to ask for next with Job > Get.
 */
export function jobAnswer(
	job: Job,
	options: { outputOffset?: number; maxOutputBytes?: number } = {},
): JobAnswer {
	const maxOutputBytes = options.maxOutputBytes ?? TOOL_JOB_OUTPUT_MAX_BYTES;
	const startedAt = eventTime(job, ['started']);
	const finishedAt = eventTime(job, ['succeeded', 'failed', 'cancelled']);
	const answer: JobAnswer = {
		id: job.id,
		endpoint: job.inference_endpoint_name,
		status: job.status,
		createdAt: job.create_time,
		...(startedAt ? { startedAt } : {}),
		...(finishedAt ? { finishedAt } : {}),
	};
	if (startedAt && finishedAt)
		answer.runSeconds = Math.round((Date.parse(finishedAt) - Date.parse(startedAt)) / 100) / 10;
	const error = jobFailureReason(job);
	if (error) answer.error = oneLine(error, 500);
	if (job.output === undefined) return answer;
	const text = JSON.stringify(job.output);
	const offset = Math.min(Math.max(0, Math.floor(options.outputOffset ?? 0)), text.length);
	if (offset === 0 && utf8Bytes(text) <= maxOutputBytes) {
		answer.output = job.output;
		return answer;
	}
	// Measured as it travels, escaped inside the answer's JSON (quotes and control characters grow).
	const part = longestPrefix(
		text.slice(offset),
		(prefix) => utf8Bytes(JSON.stringify(prefix)) <= maxOutputBytes,
	);
	const next = offset + part.length;
	answer.outputPart = part;
	answer.outputOffset = offset;
	answer.outputLength = text.length;
	answer.note =
		next < text.length
			? `The output is ${text.length} characters of JSON; characters ${offset}-${next} are shown in outputPart. Read on with Job > Get for job ${job.id} on endpoint "${job.inference_endpoint_name}" with Output Offset ${next}.`
			: `The output is ${text.length} characters of JSON; its end from character ${offset} is shown in outputPart.`;
	return answer;
}

export interface JobListAnswer {
	total: number;
	/** Each job without its output (Job > Get reads one job's output). */
	jobs: JobAnswer[];
	note: string;
}

/** Jobs as a list a model scans: no outputs, as many as the budget holds, the rest counted. */
export function jobListAnswer(
	jobs: readonly Job[],
	maxBytes = TOOL_ANSWER_MAX_BYTES,
): JobListAnswer {
	const listed = jobs.map((job) => {
		const { output: _output, ...rest } = jobAnswer({ ...job, output: undefined });
		return rest;
	});
	const build = (count: number): JobListAnswer => ({
		total: listed.length,
		jobs: listed.slice(0, count),
		note:
			(count < listed.length ? `The first ${count} of ${listed.length} jobs are listed. ` : '') +
			'Job > Get with a job id returns its output.',
	});
	return build(largest(listed.length, (count) => answerBytes(build(count)) <= maxBytes));
}

/** The rules a model must follow for the values it fills in, from the shared limits. */
export const TOOL_PARAMETER_RULES = {
	endpointName: `The name of the inference endpoint, as the catalogue lists it; it ${NAME_RULE}.`,
	jobId:
		'The job id GPU Cloud gave when the job was created: a UUID like 3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b.',
	prompt: 'What the image should show, in words; it must not be empty.',
	imageSide: `Pixels, a whole number from ${LIMITS.imageSideMin} to ${LIMITS.imageSideMax}.`,
	seed: 'A whole number of 0 or more; the same seed and settings give the same image.',
	outputOffset: `Where to start reading a job's output (a character of its JSON text), when an earlier answer cut it at ${TOOL_JOB_OUTPUT_MAX_BYTES} bytes and named the offset to read on from.`,
	limit: `How many endpoints to list (1 or more); a tool answer keeps within ${TOOL_ANSWER_MAX_BYTES} bytes, listing the rest by name.`,
} as const;

/**
 * Tool descriptions for the operations an agent uses, from the shared limits: what each is for,
 * what to give it and what comes back. n8n's automatic tool description is only the operation's
 * action ("Generate an image in GPU Cloud"); these go in the tool's "Description" (Set Manually).
 */
export const TOOL_DESCRIPTIONS = {
	listEndpoints: `Lists the GPU Cloud inference endpoints this organization can run: for each its name, display name, one-line description, price and the input fields it takes. Answers stay within ${TOOL_ANSWER_MAX_BYTES} bytes: a large catalogue lists the first endpoints in detail and the rest by name. The Inference Endpoint > Get tool gives one endpoint in full.`,
	getEndpoint: `Reads one GPU Cloud inference endpoint in full: its description, price, readme and the JSON Schema its job input must match. Give endpointName: ${TOOL_PARAMETER_RULES.endpointName}`,
	runJob: `Runs a job on a GPU Cloud inference endpoint and waits for it to end. Answers the job id, status, timings and output; an output over ${TOOL_JOB_OUTPUT_MAX_BYTES} bytes is cut, with the offset to read on from with the Job > Get tool.`,
	getJob: `Reads a GPU Cloud job by endpoint name and job id: its status, timings and output. An output over ${TOOL_JOB_OUTPUT_MAX_BYTES} bytes comes in parts: give the outputOffset an earlier answer named to read the next part.`,
	generateImage: `Generates an image from a text prompt on a GPU Cloud image workload. Prompt: ${TOOL_PARAMETER_RULES.prompt} Width and height: ${TOOL_PARAMETER_RULES.imageSide} The answer describes the image (size, seed, bytes); the image itself cannot be shown in this chat.`,
} as const;
