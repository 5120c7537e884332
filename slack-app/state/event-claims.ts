import type { Logger } from '@slack/bolt';
import { redisInTime } from './timeout';

/**
 * Slack sends an Events API event again when it heard no acknowledgement in 3 s: over HTTP as a
 * retry with `X-Slack-Retry-Num`, in Socket Mode as an envelope with `retry_attempt`. Either way the
 * event keeps its `event_id`, and either receiver claims it here before Bolt sees it, so the work
 * an event starts starts once, whichever copy comes first and whichever replica it reaches.
 */

/**
 * Slack retries an event it saw no acknowledgement for three times (at once, after a minute, after
 * five); its id is remembered well past the last.
 */
const EVENT_MEMORY_MS = 3600_000;
/** Slack's ids: `Ev…` for an event, `T…` (or `E…` for an organization) for a workspace. */
const EVENT_ID = /^Ev[0-9A-Za-z]{1,64}$/;
const TEAM_ID = /^[TE][0-9A-Z]{1,32}$/;

export interface ClaimsOptions {
	/**
	 * True the first time `key` is claimed within `ttlMs` (SharedState.claimOnce: in this process's
	 * memory, or by any replica, however long Redis takes to answer); waited for at most
	 * SHARED_STATE_WAIT_MS.
	 */
	claimOnce: (key: string, ttlMs: number) => Promise<boolean>;
	logger: () => Logger;
}

export class Claims {
	constructor(private readonly options: ClaimsOptions) {}

	/**
	 * Claims an Events API delivery by its workspace and event id, once for every replica: later
	 * deliveries of it are not dispatched again. True when this delivery is the first; rejects when
	 * Redis does not answer in time (see first), and `dispatch` runs should that claim land later.
	 */
	async claimEvent(
		{ team, id }: { team: string; id: string },
		retryNum: number | undefined,
		dispatch: () => void,
	): Promise<boolean> {
		const first = await this.first(`slack-event:${team}:${id}`, EVENT_MEMORY_MS, () => {
			this.options
				.logger()
				.info(
					`Event ${id} was claimed after it was refused for now; taken up now, Slack's retries of it are ignored.`,
				);
			dispatch();
		});
		if (!first)
			this.options
				.logger()
				.info(
					`Ignored event ${id}${retryNum ? ` (Slack's retry #${retryNum})` : ''}: it was taken up already.`,
				);
		return first;
	}

	/**
	 * True the first time `key` is claimed within `ttlMs`, waited for at most SHARED_STATE_WAIT_MS
	 * (Slack's ack cannot wait). Past that it rejects, the delivery is left for Slack to send again;
	 * should the claim then still land as the first, nobody else will ever take the key up, so
	 * `lateFirst` does what the refused delivery would have done.
	 */
	async first(key: string, ttlMs: number, lateFirst?: () => void): Promise<boolean> {
		const claim = this.options.claimOnce(key, ttlMs);
		try {
			return await redisInTime(claim);
		} catch (error) {
			if (lateFirst)
				claim.then(
					(first) => first && lateFirst(),
					() => undefined,
				);
			throw error;
		}
	}
}

/**
 * An event_callback's workspace (`team_id`, or `enterprise_id` for an organization) and `event_id`,
 * or what is wrong with them: they become a key in Redis, so only Slack's form is taken.
 */
export function eventIds(body: Record<string, unknown>): { team: string; id: string } | string {
	const team = body.team_id ?? body.enterprise_id;
	const id = body.event_id;
	if (typeof team !== 'string' || !TEAM_ID.test(team))
		return `team_id is missing or not a Slack workspace id (${TEAM_ID.source})`;
	if (typeof id !== 'string' || !EVENT_ID.test(id))
		return `event_id is missing or not a Slack event id (${EVENT_ID.source})`;
	return { team, id };
}
