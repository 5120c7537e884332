import type { IDataObject } from 'n8n-workflow';

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
    if (space > 0 && Number.isFinite(seenAt) && seenAt > oldestKept) saved.set(entry.slice(space + 1), seenAt);
  }
  return saved;
}

/**
 * The delivery ids one trigger node has accepted, so that a repeated delivery (same webhook-id)
 * does not start the workflow again when it reaches another n8n process, or the same one after a
 * restart.
 *
 * The shared record is the workflow's static data: the one store every n8n process reaches from a
 * webhook method. Each production webhook request reads the workflow from the database, and n8n
 * saves the static data back when the node changed it, whichever process (main or webhook
 * processor) took the request. n8n's database-backed de-duplication helpers are not offered to
 * webhook methods (2.8 to 2.41).
 *
 * n8n saves static data whole, so requests handled at the same time by different processes
 * overwrite each other's new ids. Each process also keeps the ids it accepted itself and writes
 * them back with every later delivery it handles. What remains: while requests overlap (deliveries
 * closer together than n8n takes to answer one), a repeat reaching another process can count as
 * new. Downstream nodes get the id as `webhookId` to de-duplicate on.
 */
export class DeliveryRecord {
  private readonly acceptedHere = new Map<string, number>();

  /** True for an id seen neither in the workflow's record nor by this process; records it. */
  firstDelivery(store: IDataObject, id: string, nowSeconds: number): boolean {
    const oldestKept = nowSeconds - REMEMBER_SECONDS;
    const saved = readSaved(store, oldestKept);
    for (const [seen, seenAt] of this.acceptedHere) if (seenAt <= oldestKept) this.acceptedHere.delete(seen);
    const isNew = !saved.has(id) && !this.acceptedHere.has(id);
    if (isNew) {
      this.acceptedHere.set(id, nowSeconds);
      if (this.acceptedHere.size > MAX_REMEMBERED) this.acceptedHere.delete(this.acceptedHere.keys().next().value ?? id);
    }
    const missing = [...this.acceptedHere].filter(([seen]) => !saved.has(seen));
    if (missing.length === 0) return isNew;
    const merged = [...saved, ...missing].sort((a, b) => a[1] - b[1]).slice(-MAX_REMEMBERED);
    // A new array, not a change inside the old one: n8n notices assignments to the node's own data.
    store.deliveries = merged.map(([seen, seenAt]) => `${seenAt} ${seen}`);
    return isNew;
  }
}
