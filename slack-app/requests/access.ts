import type { webApi } from '@slack/bolt';
import { z } from 'zod/v4';
import type { SlackMessage } from '../model';
import { deniedMessage } from '../messages/errors';
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

/** Slots shared with other replicas (Redis); without, this process counts alone. */
export type SharedSlots = Pick<
	SharedState,
	'acquireSlot' | 'adoptSlot' | 'releaseSlot' | 'slotsInUse'
>;

export class AccessPolicy {
	private readonly users: Set<string>;
	private readonly channels: Set<string>;
	/** Running work per user, by request reference. */
	private readonly running = new Map<string, Set<string>>();

	constructor(
		readonly settings: AccessSettings,
		private readonly shared?: SharedSlots,
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
		const mine = this.running.get(user) ?? new Set<string>();
		if (mine.has(ref)) return undefined;
		const running = this.shared
			? await this.shared.acquireSlot(user, ref, this.settings.maxJobsPerUser)
			: mine.size >= this.settings.maxJobsPerUser
				? mine.size
				: undefined;
		if (running !== undefined) {
			return {
				reason: `You already have ${running} GPU job${running === 1 ? '' : 's'} running (the limit is ${this.settings.maxJobsPerUser}). Wait for one to finish or cancel one.`,
				hint: 'To raise the limit, ask',
			};
		}
		mine.add(ref);
		this.running.set(user, mine);
		return undefined;
	}

	/** Counts work the app resumed after a restart, even past the limit: it is already running. */
	adopt(user: string, ref: string): void {
		const mine = this.running.get(user) ?? new Set<string>();
		mine.add(ref);
		this.running.set(user, mine);
		// Fire and forget: it waits for Redis, and only a shutdown ends the wait.
		this.shared?.adoptSlot(user, ref).catch(() => undefined);
	}

	async release(user: string, ref: string): Promise<void> {
		this.running.get(user)?.delete(ref);
		await this.shared?.releaseSlot(user, ref);
	}

	/** The user's work running in this process. */
	runningCount(user: string): number {
		return this.running.get(user)?.size ?? 0;
	}

	/** The user's slots in use by any replica (shared), else by this process. */
	async slotsInUse(user: string): Promise<number> {
		const here = this.runningCount(user);
		if (!this.shared) return here;
		// Only a count to show: when Redis does not answer in time, this replica's own will do.
		return redisInTime(this.shared.slotsInUse(user)).catch(() => here);
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
