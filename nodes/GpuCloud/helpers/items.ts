import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { mapWithConcurrency } from '../../../shared';
import { toNodeError } from './errors';
import { isToolRun, toolErrorSentence } from './tool';

export const DEFAULT_CONCURRENCY = 8;

/** The output of one item's work; `pairedItem` is added for it. */
export type ItemResult = Array<Pick<INodeExecutionData, 'json' | 'binary'>>;

/** For work that creates jobs: what a sibling's failure must neither interrupt nor hide. */
export interface JobRecorder {
	/**
	 * Fires only when the execution is cancelled. Requests that create something use it instead of
	 * `signal`, so another item's failure never cuts off a create whose job then exists unreported.
	 */
	createSignal: AbortSignal | undefined;
	/** Notes the job created for this item, for the error to name if the run stops. */
	jobCreated: (jobId: string) => void;
}

export interface ItemWork<P> {
	/** Reads and checks the item's parameters. Runs for every item before any request is sent. */
	prepare: (itemIndex: number) => P | Promise<P>;
	/**
	 * Checks a prepared item against what the service publishes (reads only, nothing created): runs
	 * after every item is prepared, so a bad parameter still stops the node before any request, and
	 * before any item runs, so a refused item stops it before anything is created.
	 */
	check?: (prepared: P, itemIndex: number) => Promise<void>;
	/** Sends the item's requests. `signal` fires when the execution is cancelled or another item failed. */
	run: (
		prepared: P,
		itemIndex: number,
		signal: AbortSignal,
		jobs: JobRecorder,
	) => Promise<ItemResult>;
}

export function jsonResult(data: IDataObject | IDataObject[]): ItemResult {
	return (Array.isArray(data) ? data : [data]).map((json) => ({ json }));
}

function errorItem(
	error: { message: string; description?: string | null },
	itemIndex: number,
): INodeExecutionData {
	const json: IDataObject = { error: error.message };
	if (error.description) json.details = error.description;
	return { json, pairedItem: { item: itemIndex } };
}

/** The node-wide "Concurrency" option, read once. */
export function readConcurrency(context: IExecuteFunctions): number {
	const value = context.getNodeParameter('options.concurrency', 0, DEFAULT_CONCURRENCY);
	return typeof value === 'number' && Number.isInteger(value) && value >= 1
		? value
		: DEFAULT_CONCURRENCY;
}

/**
 * A run that stops throws away every item's output, so the error must carry what already exists
 * on GPU Cloud (and costs money): which items' jobs were created, so a re-run can skip them.
 */
function reportCreatedJobs(
	error: ReturnType<typeof toNodeError>,
	created: Map<number, string>,
	itemCount: number,
): void {
	if (created.size === 0) return;
	const entries = [...created].sort(([a], [b]) => a - b);
	const list = entries.map(([item, jobId]) => `item ${item}: job ${jobId}`).join('\n');
	const note =
		`Jobs were already created for ${created.size} of ${itemCount} items before the node stopped. They keep running on GPU Cloud: ` +
		`skip these items when you run the workflow again (or read the jobs with the "Get" operation). ` +
		`To get every item's job even when some fail, set the node's "On Error" setting to "Continue".\n${list}`;
	error.description = error.description ? `${error.description}\n\n${note}` : note;
	error.context.createdJobs = entries.map(([itemIndex, jobId]) => ({ itemIndex, jobId }));
}

/**
 * Runs one unit of work per input item, at most `concurrency` at a time, keeping output order and
 * pairing. All items are prepared, then checked, first: a bad parameter stops the node before any
 * request, an item the service would refuse before any item runs.
 * Without "Continue On Fail" the first failure stops the node: items not yet started are skipped,
 * waits are cancelled, creates in flight finish, and the error names every job already created.
 * With it, failed items become `{ error }` items in their place. Run as a tool, a failure is the
 * answer: `{ error }` with one sentence the model can act on (an agent's tool call should not end
 * the agent's run, and a model has no use for n8n's details or a stack).
 */
export async function runItems<P>(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	concurrency: number,
	work: ItemWork<P>,
): Promise<INodeExecutionData[]> {
	const node = context.getNode();
	const asTool = isToolRun(context);
	const continueOnFail = asTool || context.continueOnFail();
	type Prepared =
		| { ok: true; value: P }
		| { ok: false; error: ReturnType<typeof toNodeError>; cause: unknown };
	const failedItem = (
		failure: { error: ReturnType<typeof toNodeError>; cause: unknown },
		index: number,
	) =>
		asTool
			? { json: { error: toolErrorSentence(failure.cause) }, pairedItem: { item: index } }
			: errorItem(failure.error, index);
	/** A step for one item: its failure stops the node, or with "Continue On Fail" fails the item. */
	const attempt = async (index: number, step: () => P | Promise<P>): Promise<Prepared> => {
		try {
			return { ok: true, value: await step() };
		} catch (error) {
			const nodeError = toNodeError(node, error, index);
			if (!continueOnFail) throw nodeError;
			return { ok: false, error: nodeError, cause: error };
		}
	};
	const prepared: Prepared[] = [];
	for (let index = 0; index < items.length; index++)
		prepared.push(await attempt(index, () => work.prepare(index)));
	const { check } = work;
	if (check) {
		for (const [index, entry] of prepared.entries()) {
			if (!entry.ok) continue;
			prepared[index] = await attempt(index, async () => {
				await check(entry.value, index);
				return entry.value;
			});
		}
	}

	const stop = new AbortController();
	let stopReason: ReturnType<typeof toNodeError> | undefined;
	const cancel = context.getExecutionCancelSignal();
	const signal = cancel ? AbortSignal.any([cancel, stop.signal]) : stop.signal;
	const createdJobs = new Map<number, string>();
	const settled = await mapWithConcurrency(
		prepared,
		concurrency,
		async (entry, index): Promise<INodeExecutionData[]> => {
			if (!entry.ok) return [failedItem(entry, index)];
			if (signal.aborted) return [];
			const jobs: JobRecorder = {
				createSignal: cancel,
				jobCreated: (jobId) => createdJobs.set(index, jobId),
			};
			try {
				const result = await work.run(entry.value, index, signal, jobs);
				return result.map((item) => ({ ...item, pairedItem: { item: index } }));
			} catch (error) {
				const nodeError = toNodeError(node, error, index);
				if (continueOnFail) return [failedItem({ error: nodeError, cause: error }, index)];
				// Items stopped because of this failure fail only as a consequence: report the cause.
				if (!stopReason) {
					stopReason = nodeError;
					stop.abort();
				}
				return [];
			}
		},
	);

	if (stopReason) {
		reportCreatedJobs(stopReason, createdJobs, items.length);
		throw stopReason;
	}
	const output: INodeExecutionData[] = [];
	for (const result of settled) {
		if (result.ok) output.push(...result.value);
	}
	return output;
}
