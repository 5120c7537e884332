import type { webApi } from '@slack/bolt';
import { z } from 'zod/v4';
import type { SlackMessage } from '../model';
import { deniedMessage } from '../messages/errors';
import { LocalSlots } from '../state/local-state';
import type { SharedState } from '../state/shared-state';
import { redisInTime } from '../state/timeout';

/**
 * Who may spend GPU time from Slack: allow-lists of users and channels (empty means everyone) and a
 * limit on each user's concurrent jobs, since GPU time costs money.
 */

export interface AccessSettings {
	allowedUsers: string[];
	allowedChannels: string[];
	maxJobsPerUser: number;
	contact: string;
}

export interface Denial {
	reason: string;
	hint: string;
}

/** Each user's slots, held by this process or any replica (SharedState). */
export type SharedSlots = Pick<
	SharedState,
	'acquireSlot' | 'adoptSlot' | 'releaseSlot' | 'slotsInUse' | 'slotsHere'
>;

export class AccessPolicy {
	private readonly users: Set<string>;
	private readonly channels: Set<string>;

	/** `slots`: the app's SharedState; alone (tests), this process's own. */
	constructor(
		readonly settings: AccessSettings,
		private readonly slots: SharedSlots = new LocalSlots(),
	) {
		this.users = new Set(settings.allowedUsers);
		this.channels = new Set(settings.allowedChannels);
	}

	/** The private reply refusing `user` in `channel`; undefined when they may go ahead. */
	refusal(user: string, channel: string): SlackMessage | undefined {
		const denial = this.check(user, channel);
		return denial ? this.deniedReply(denial) : undefined;
	}

	/** The private reply for a denial, naming whom to ask. */
	deniedReply(denial: Denial): SlackMessage {
		return deniedMessage(denial.reason, denial.hint, this.settings.contact);
	}

	/** Undefined when the user may use the app in this channel. */
	check(user: string, channel: string): Denial | undefined {
		if (this.users.size > 0 && !this.users.has(user)) {
			return {
				reason: 'You are not on the list of people who can use GPU Cloud from Slack.',
				hint: 'To get access, ask',
			};
		}
		if (this.channels.size > 0 && !this.channels.has(channel)) {
			return {
				reason: 'GPU Cloud is not enabled in this channel.',
				hint: 'Use it in an allowed channel, or to enable this one ask',
			};
		}
		return undefined;
	}

	/** Reserves one of the user's slots for `ref`; a Denial when they are all in use. */
	async acquire(user: string, ref: string): Promise<Denial | undefined> {
		const running = await this.slots.acquireSlot(user, ref, this.settings.maxJobsPerUser);
		if (running !== undefined) {
			return {
				reason: `You already have ${running} GPU job${running === 1 ? '' : 's'} running (the limit is ${this.settings.maxJobsPerUser}). Wait for one to finish or cancel one.`,
				hint: 'To raise the limit, ask',
			};
		}
		return undefined;
	}

	/** Counts work the app resumed after a restart, even past the limit: it is already running. */
	adopt(user: string, ref: string): void {
		// Fire and forget: counted here at once, it waits for Redis, and only a shutdown ends the wait.
		this.slots.adoptSlot(user, ref).catch(() => undefined);
	}

	async release(user: string, ref: string): Promise<void> {
		await this.slots.releaseSlot(user, ref);
	}

	/** The user's work running in this process. */
	runningCount(user: string): number {
		return this.slots.slotsHere(user);
	}

	/** The user's slots in use by any replica. */
	async slotsInUse(user: string): Promise<number> {
		const here = this.runningCount(user);
		// Only a count to show: when Redis does not answer in time, this replica's own will do.
		return redisInTime(this.slots.slotsInUse(user)).catch(() => here);
	}
}

const userInfoSchema = z.looseObject({
	user: z
		.looseObject({
			is_admin: z.boolean().optional(),
			is_owner: z.boolean().optional(),
			is_primary_owner: z.boolean().optional(),
		})
		.optional(),
});

/** Whether Slack says `user` is an admin or owner of the workspace (users.info); throws when it cannot tell. */
export async function isWorkspaceAdmin(client: webApi.WebClient, user: string): Promise<boolean> {
	const info = userInfoSchema.parse(await client.users.info({ user })).user;
	return info?.is_admin === true || info?.is_owner === true || info?.is_primary_owner === true;
}
