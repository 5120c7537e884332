import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

/** How long a delivery id is remembered; repeats come within minutes, hours at the very most. */
const REMEMBER_SECONDS = 24 * 60 * 60;
/** Bounds what n8n writes back to the workflow per delivery: about 50 bytes an id. */
const MAX_REMEMBERED = 1_000;

/** "<seconds> <id>" strings, oldest first: flat, so n8n wraps no object per id when it loads the workflow. */
function readSaved(store: IDataObject, oldestKept: number): Map<string, number> {
	const saved = new Map<string, number>();
	for (const entry of Array.isArray(store.deliveries) ? store.deliveries : []) {
		if (typeof entry !== 'string') continue;
		const space = entry.indexOf(' ');
		const seenAt = Number(entry.slice(0, space));
		if (space > 0 && Number.isFinite(seenAt) && seenAt > oldestKept)
			saved.set(entry.slice(space + 1), seenAt);
	}
	return saved;
}

/**
 * The delivery ids one trigger node has accepted, so that a repeated delivery (same webhook-id)
 * does not start the workflow again when it reaches another n8n process, or the same one after a
 * restart.
 *
 * The shared record is the workflow's static data: the one store every n8n process reaches from a
 * webhook method. Each production webhook request reads the workflow from the database when it
 * arrives, and n8n saves the static data back when the node changed it, whichever process (main or
 * webhook processor) took the request — after the execution is queued, just before the reply
 * (n8n 2.8 to 2.41). n8n's database-backed de-duplication helpers are not offered to webhook methods.
 *
 * n8n saves static data whole, so requests handled at the same time by different processes
 * overwrite each other's new ids. Each process also keeps the ids it accepted itself and writes
 * them back with every later delivery it handles. A repeat this misses starts an execution, which
 * `firstRuns` then stops at the trigger.
 */
export class DeliveryRecord {
	private readonly acceptedHere = new Map<string, number>();

	/** True for an id seen neither in the workflow's record nor by this process; records it. */
	firstDelivery(store: IDataObject, id: string, nowSeconds: number): boolean {
		const oldestKept = nowSeconds - REMEMBER_SECONDS;
		const saved = readSaved(store, oldestKept);
		for (const [seen, seenAt] of this.acceptedHere)
			if (seenAt <= oldestKept) this.acceptedHere.delete(seen);
		const isNew = !saved.has(id) && !this.acceptedHere.has(id);
		if (isNew) {
			this.acceptedHere.set(id, nowSeconds);
			if (this.acceptedHere.size > MAX_REMEMBERED)
				this.acceptedHere.delete(this.acceptedHere.keys().next().value ?? id);
		}
		const missing = [...this.acceptedHere].filter(([seen]) => !saved.has(seen));
		if (missing.length === 0) return isNew;
		const merged = [...saved, ...missing].sort((a, b) => a[1] - b[1]).slice(-MAX_REMEMBERED);
		// A new array, not a change inside the old one: n8n notices assignments to the node's own data.
		store.deliveries = merged.map(([seen, seenAt]) => `${seenAt} ${seen}`);
		return isNew;
	}
}

/** n8n's "Remove Duplicates" store (its database table), as the trigger node uses it: its own row. */
const PROCESSED = { mode: 'entries', maxEntries: MAX_REMEMBERED } as const;
/** Longer than one read and write of that row takes, so a concurrent write has landed by then. */
const SETTLE_MS = 500;
/** The first look-up and at most two more, each after a pause, while a concurrent write keeps losing the id. */
const LOOK_UPS = 3;

/**
 * The items of deliveries no earlier execution of this trigger node has run, recorded as run: the
 * second line of de-duplication, inside the execution (on a worker in queue mode), where n8n offers
 * its database-backed helper. A repeat the webhook method let through stops here, so nothing after
 * the trigger runs twice.
 *
 * n8n's helper reads the node's row and writes it back whole, and the first two writers both try to
 * create it. So: a failed first write is tried again, and after a pause the id is looked up again
 * and recorded again if a concurrent write of another id overwrote it (else a later repeat would
 * pass). What remains: two executions of the same delivery reading the row before either writes.
 * Executions the editor starts (tests) are not recorded.
 */
export async function firstRuns(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	if (context.getMode() !== 'webhook') return items;
	const ids = [
		...new Set(
			items.map((item) => item.json.webhookId).filter((id): id is string => typeof id === 'string'),
		),
	];
	if (ids.length === 0) return items;
	const { processed } = await record(context, ids);
	let unsure = ids.filter((id) => !processed.includes(id));
	for (let round = 1; round < LOOK_UPS && unsure.length > 0; round++) {
		await sleep(SETTLE_MS);
		const again = await record(context, unsure);
		unsure = again.new.filter((id): id is string => typeof id === 'string');
	}
	return items.filter(
		(item) => typeof item.json.webhookId !== 'string' || !processed.includes(item.json.webhookId),
	);
}

async function record(context: IExecuteFunctions, ids: string[]) {
	try {
		return await context.helpers.checkProcessedAndRecord(ids, 'node', PROCESSED);
	} catch {
		// Two executions created the node's row at once: the row exists now.
		return await context.helpers.checkProcessedAndRecord(ids, 'node', PROCESSED);
	}
}
