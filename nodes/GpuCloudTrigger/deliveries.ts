import type { IDataObject } from 'n8n-workflow';

/** How long a delivery id is remembered; repeats come within minutes, hours at the very most. */
const REMEMBER_SECONDS = 24 * 60 * 60;
/** Bounds what n8n writes back to the workflow per delivery: about 50 bytes an id. */
const MAX_REMEMBERED = 1_000;

/**
 * Records a delivery id in the trigger's workflow static data and says whether it is new.
 *
 * Static data is the one store every n8n process reaches from a webhook method: each production
 * webhook request reads the workflow from the database and n8n saves the static data back when the
 * node changed it, whichever process (main or webhook processor) took the request. It survives
 * restarts too. n8n's database-backed de-duplication helpers are not offered to webhook methods.
 *
 * What remains: two deliveries of one id that reach two processes before either has saved (a few
 * milliseconds) both count as new, and two new ids saved at the same moment by two processes
 * overwrite each other, so a later repeat of the lost one counts as new. Downstream nodes get the
 * id as `webhookId` to de-duplicate on exactly (n8n's Remove Duplicates node).
 */
export function firstDeliveryInWorkflow(store: IDataObject, id: string, nowSeconds: number): boolean {
  const saved = store.deliveries;
  // "<seconds> <id>" strings, oldest first: flat, so n8n wraps no object per id when it loads the
  // workflow. Anything else is dropped.
  const remembered = (Array.isArray(saved) ? saved : []).filter((entry): entry is string => {
    if (typeof entry !== 'string') return false;
    const seenAt = Number(entry.slice(0, entry.indexOf(' ')));
    return Number.isFinite(seenAt) && seenAt > nowSeconds - REMEMBER_SECONDS;
  });
  if (remembered.some((entry) => entry.slice(entry.indexOf(' ') + 1) === id)) return false;
  // A new array, not a change inside the old one: n8n notices assignments to the node's own data.
  store.deliveries = [...remembered.slice(-(MAX_REMEMBERED - 1)), `${nowSeconds} ${id}`];
  return true;
}
