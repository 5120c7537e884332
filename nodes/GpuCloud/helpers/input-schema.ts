import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import {
	acceptsMediaType,
	describeInputSchema,
	inputFromFields,
	inputSchemaIssues,
	mediaFieldsOf,
	parseInputSchema,
	readSchemaForm,
	type InferenceEndpoint,
	type InputSchemaIssue,
	type ManagementClient,
	type Schema,
} from '../../../shared';
import { toNodeError } from './errors';
import { MEDIA_FILES, type MediaFile } from './media-files';

/** The job one item would create: its endpoint and the body's input, or the fields that make it. */
interface JobInput {
	endpoint: string;
	request: { input: unknown };
	fields?: Readonly<Record<string, unknown>>;
	/** Files the item gives for media fields, uploaded after this check (see media-files.ts). */
	mediaFiles?: { files: readonly MediaFile[] };
}

/** The type n8n gives a binary file it could not tell, which says nothing against any field. */
const UNKNOWN_TYPE = 'application/octet-stream';

/**
 * Why the item's files cannot go where it puts them: a field that is not a media field of the
 * endpoint, or a file of a type the field does not read. Undefined when they all fit.
 */
function mediaFilesProblem(
	files: readonly MediaFile[],
	schema: Schema | undefined,
	name: string,
): string | undefined {
	const media = mediaFieldsOf(schema);
	for (const { field, mimeType } of files) {
		const target = media.find((candidate) => candidate.field === field);
		if (!target) {
			const fields = media.map((candidate) => `"${candidate.field}"`).join(', ');
			return `${MEDIA_FILES}: "${field}" is not a media field of endpoint "${name}", which has ${fields || 'none'}`;
		}
		if (mimeType !== UNKNOWN_TYPE && !acceptsMediaType(target.accept, mimeType))
			return `${MEDIA_FILES}: the file for "${field}" is ${mimeType}; endpoint "${name}" reads ${target.accept} there`;
	}
	return undefined;
}

const NOTHING_CREATED =
	'No job was created: the node reads the endpoint first, to check the input against its input_schema before creating a job that would be billed.';

/** `Input "text" is required; "max_words" must be at most 1000`: every broken rule, where it is. */
function describeIssues(issues: InputSchemaIssue[], subject = 'Input'): string {
	const parts = issues.map(({ path, rule }, index) => {
		if (path !== '') return `"${path}" ${rule}`;
		return index === 0 ? rule : `the whole input ${rule}`;
	});
	return `${subject} ${parts.join('; ')}`;
}

/**
 * The check every operation that creates a job from the user's input runs before the create, so an
 * input the endpoint would refuse fails its item instead of becoming a job that is billed and then
 * fails. Each endpoint is read once per run of the node, however many items use it. A schema the
 * checker does not understand never blocks an input (shared/input-schema.ts leaves it to the service).
 * An input given as the endpoint's fields becomes the job's input here, where the schema is read.
 */
export function inputSchemaCheck(
	context: IExecuteFunctions,
	client: ManagementClient,
): (job: JobInput, itemIndex: number) => Promise<void> {
	const endpoints = new Map<string, Promise<InferenceEndpoint>>();
	const signal = context.getExecutionCancelSignal();
	return async (job, itemIndex) => {
		const { endpoint: name, fields } = job;
		let read = endpoints.get(name);
		if (!read) {
			read = client.endpoints.get(name, { signal });
			endpoints.set(name, read);
		}
		let endpoint: InferenceEndpoint;
		try {
			endpoint = await read;
		} catch (error) {
			// The item fails rather than its job being created unchecked: the read goes to the same
			// service as the create, after the client's retries, so a create would most likely fail
			// the same way (an unknown endpoint, a refused key, an outage), and if it did not, the user
			// would get a billed job whose input nobody checked. Nothing exists yet, so "Retry On Fail"
			// or a re-run is safe. The failure is kept for the run: other items are not read again.
			const nodeError = toNodeError(context.getNode(), error, itemIndex);
			if (!nodeError.description?.includes(NOTHING_CREATED))
				nodeError.description = nodeError.description
					? `${nodeError.description}\n${NOTHING_CREATED}`
					: NOTHING_CREATED;
			throw nodeError;
		}
		const schema = parseInputSchema(endpoint.input_schema);
		let issues: InputSchemaIssue[];
		if (fields) {
			const form = readSchemaForm(endpoint.input_schema);
			if (form.kind === 'json')
				throw new NodeOperationError(
					context.getNode(),
					`${form.reason} Set "Input" to "Using JSON" and write the input there (endpoint "${name}").`,
					{ itemIndex, description: 'No job was created.' },
				);
			const files = job.mediaFiles?.files ?? [];
			const problem = mediaFilesProblem(files, schema, name);
			if (problem)
				throw new NodeOperationError(context.getNode(), problem, {
					itemIndex,
					description: 'No job was created and no file uploaded.',
				});
			// A field given a file counts as filled; its link replaces the empty value once uploaded.
			const withFiles = new Set(files.map((file) => file.field));
			const made = inputFromFields(
				form,
				fields,
				Object.fromEntries([...withFiles].map((field) => [field, ''])),
			);
			job.request.input = made.input;
			const media = new Set(mediaFieldsOf(schema).map((field) => field.field));
			issues = made.issues
				.filter(({ path }) => !withFiles.has(path.split(/[.[]/)[0]))
				.map((issue) =>
					media.has(issue.path) && issue.rule === 'is required'
						? { ...issue, rule: `is required: give it a URL, or a file under "${MEDIA_FILES}"` }
						: issue,
				);
		} else {
			issues = schema ? inputSchemaIssues(schema, job.request.input) : [];
		}
		if (issues.length === 0) return;
		const expects = describeInputSchema(schema);
		throw new NodeOperationError(
			context.getNode(),
			`${describeIssues(issues, fields ? 'Field' : 'Input')} (input_schema of endpoint "${name}")`,
			{
				itemIndex,
				description: `Item ${itemIndex}'s input was checked against the input_schema that endpoint "${name}" publishes, before creating its job: no job was created.${expects ? ` It expects: ${expects}.` : ''}`,
			},
		);
	};
}
