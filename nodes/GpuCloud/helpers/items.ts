import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { mapWithConcurrency } from '../../../shared';
import { toNodeError } from './errors';

export const DEFAULT_CONCURRENCY = 8;

/** The output of one item's work; `pairedItem` is added for it. */
export type ItemResult = Array<Pick<INodeExecutionData, 'json' | 'binary'>>;

export interface ItemWork<P> {
  /** Reads and checks the item's parameters. Runs for every item before any request is sent. */
  prepare: (itemIndex: number) => P | Promise<P>;
  /** Sends the item's requests. `signal` fires when the execution is cancelled or another item failed. */
  run: (prepared: P, itemIndex: number, signal: AbortSignal) => Promise<ItemResult>;
}

export function jsonResult(data: IDataObject | IDataObject[]): ItemResult {
  return (Array.isArray(data) ? data : [data]).map((json) => ({ json }));
}

function errorItem(error: { message: string; description?: string | null }, itemIndex: number): INodeExecutionData {
  const json: IDataObject = { error: error.message };
  if (error.description) json.details = error.description;
  return { json, pairedItem: { item: itemIndex } };
}

/** The node-wide "Concurrency" option, read once. */
export function readConcurrency(context: IExecuteFunctions): number {
  const value = context.getNodeParameter('options.concurrency', 0, DEFAULT_CONCURRENCY);
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : DEFAULT_CONCURRENCY;
}

/**
 * Runs one unit of work per input item, at most `concurrency` at a time, keeping output order and
 * pairing. All items are checked first, so a bad parameter stops the node before any request.
 * Without "Continue On Fail" the first failure (in item order) stops the node and cancels the
 * items not yet started; with it, failed items become `{ error }` items in their place.
 */
export async function runItems<P>(
  context: IExecuteFunctions,
  items: INodeExecutionData[],
  concurrency: number,
  work: ItemWork<P>,
): Promise<INodeExecutionData[]> {
  const node = context.getNode();
  const continueOnFail = context.continueOnFail();
  const prepared: Array<{ ok: true; value: P } | { ok: false; error: ReturnType<typeof toNodeError> }> = [];
  for (let index = 0; index < items.length; index++) {
    try {
      prepared.push({ ok: true, value: await work.prepare(index) });
    } catch (error) {
      const nodeError = toNodeError(node, error, index);
      if (!continueOnFail) throw nodeError;
      prepared.push({ ok: false, error: nodeError });
    }
  }

  const stop = new AbortController();
  let stopReason: ReturnType<typeof toNodeError> | undefined;
  const cancel = context.getExecutionCancelSignal();
  const signal = cancel ? AbortSignal.any([cancel, stop.signal]) : stop.signal;
  const settled = await mapWithConcurrency(prepared, concurrency, async (entry, index): Promise<INodeExecutionData[]> => {
    if (!entry.ok) return [errorItem(entry.error, index)];
    if (signal.aborted) return [];
    try {
      const result = await work.run(entry.value, index, signal);
      return result.map((item) => ({ ...item, pairedItem: { item: index } }));
    } catch (error) {
      const nodeError = toNodeError(node, error, index);
      if (continueOnFail) return [errorItem(nodeError, index)];
      // Items stopped because of this failure fail only as a consequence: report the cause.
      if (!stopReason) {
        stopReason = nodeError;
        stop.abort();
      }
      return [];
    }
  });

  if (stopReason) throw stopReason;
  const output: INodeExecutionData[] = [];
  for (const result of settled) {
    if (result.ok) output.push(...result.value);
  }
  return output;
}
