import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import {
	describeInputSchema,
	inputFromFields,
	inputSchemaIssues,
	parseInputSchema,
	readSchemaForm,
	type InferenceEndpoint,
	type InputSchemaIssue,
	type ManagementClient,
} from '../../../shared';
import { toNodeError } from './errors';

/** The job one item would create: its endpoint and the body's input, or the fields that make it. */
interface JobInput {
	endpoint: string;
	request: { input: unknown };
	fields?: Readonly<Record<string, unknown>>;
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
			const made = inputFromFields(form, fields);
			job.request.input = made.input;
			issues = made.issues;
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
