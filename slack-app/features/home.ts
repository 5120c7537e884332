import type { Logger, webApi } from '@slack/bolt';
import { z } from 'zod/v4';
import type { JobRef } from '../messages/actions';
import { homeView, runningJobOf, type HomeSettings } from '../messages/home';
import type { SlackMessage } from '../model';
import { isWorkspaceAdmin, type AccessPolicy } from '../requests/access';
import { withCallPriority } from '../slack/call-budget';
import { errorSummary } from '../slack/errors';

type WebClient = webApi.WebClient;

/** Requests kept per person; the Home tab shows the newest first. */
const HOME_RECENT_REQUESTS = 10;
/** A burst of status edits becomes one Home refresh. */
const REFRESH_DELAY_MS = 500;

interface RecordedRequest {
	channel: string;
	ts: string;
	user: string;
	parent: SlackMessage;
	permalink?: string;
}

const permalinkSchema = z.looseObject({ permalink: z.string().url().optional() });

export interface HomeTabOptions {
	client: WebClient;
	access: AccessPolicy;
	settings: Omit<HomeSettings, 'allowedUsers' | 'allowedChannels' | 'maxJobsPerUser' | 'contact'>;
	logger: Logger;
}

/**
 * The Home tab of each person: their recent requests as their parent messages show them, kept
 * current as those messages change (for people who have opened the tab since the app started),
 * their job slots, and for admins the settings. Recent requests live in memory: after a restart
 * the list starts afresh.
 */
export class HomeTab {
	private readonly requests = new Map<string, RecordedRequest[]>();
	/** Whose request each recorded parent (`channel/ts`) is, so an edit finds it at once. */
	private readonly owners = new Map<string, string>();
	private readonly viewers = new Set<string>();
	private readonly notices = new Map<string, string>();
	private readonly pending = new Map<string, NodeJS.Timeout>();
	/** People whose Home is being published, and whether it changed again meanwhile. */
	private readonly publishing = new Map<string, { again: boolean }>();

	constructor(private readonly options: HomeTabOptions) {}

	/** A parent message was posted for `user`'s request. */
	posted(channel: string, ts: string, user: string, parent: SlackMessage): void {
		const mine = this.requests.get(user) ?? [];
		const request: RecordedRequest = { channel, ts, user, parent };
		mine.unshift(request);
		for (const dropped of mine.splice(HOME_RECENT_REQUESTS))
			this.owners.delete(`${dropped.channel}/${dropped.ts}`);
		this.requests.set(user, mine);
		this.owners.set(`${channel}/${ts}`, user);
		// The link only adorns the Home tab: last in the call budget.
		void withCallPriority('last', () =>
			this.options.client.chat.getPermalink({ channel, message_ts: ts }),
		)
			.then((reply) => {
				request.permalink = permalinkSchema.parse(reply).permalink;
				this.refresh(user);
			})
			.catch((error: unknown) =>
				this.options.logger.debug(`No permalink for ${channel}/${ts}: ${errorSummary(error)}`),
			);
		this.refresh(user);
	}

	/** A parent message changed (status, elapsed time, result). */
	updated(channel: string, ts: string, parent: SlackMessage): void {
		const user = this.owners.get(`${channel}/${ts}`);
		const request = user
			? this.requests
					.get(user)
					?.find((candidate) => candidate.channel === channel && candidate.ts === ts)
			: undefined;
		if (!user || !request) return;
		request.parent = parent;
		this.refresh(user);
	}

	/** Where the job behind `user`'s Home Cancel button was asked for (never taken from the button). */
	channelOfJob(user: string, job: JobRef): string | undefined {
		const request = this.requests
			.get(user)
			?.find((candidate) => runningJobOf(candidate.parent)?.jobId === job.jobId);
		return request?.channel;
	}

	/** The person opened the Home tab: show it, and keep it current from now on. */
	async opened(user: string): Promise<void> {
		this.viewers.add(user);
		await this.publish(user);
	}

	async notify(user: string, notice: string): Promise<void> {
		this.notices.set(user, notice);
		await this.publish(user);
	}

	/**
	 * Debounced: a burst of changes is one publish, and changes while a publish waits for Slack's
	 * budget (views.publish is last in it) make one more after it, not one each.
	 */
	private refresh(user: string): void {
		if (!this.viewers.has(user) || this.pending.has(user)) return;
		const under = this.publishing.get(user);
		if (under) {
			under.again = true;
			return;
		}
		const timer = setTimeout(() => {
			this.pending.delete(user);
			void this.republish(user);
		}, REFRESH_DELAY_MS);
		timer.unref();
		this.pending.set(user, timer);
	}

	private async republish(user: string): Promise<void> {
		const under = { again: false };
		this.publishing.set(user, under);
		try {
			await withCallPriority('last', () => this.publish(user));
		} finally {
			this.publishing.delete(user);
			if (under.again) this.refresh(user);
		}
	}

	private async isAdmin(user: string): Promise<boolean> {
		try {
			return await isWorkspaceAdmin(this.options.client, user);
		} catch (error) {
			this.options.logger.debug(
				`Could not tell whether ${user} is an admin: ${errorSummary(error)}`,
			);
			return false;
		}
	}

	private async publish(user: string): Promise<void> {
		const { access, client, settings, logger } = this.options;
		const [admin, running] = await Promise.all([this.isAdmin(user), access.slotsInUse(user)]);
		const view = homeView({
			requests: (this.requests.get(user) ?? []).map(({ parent, permalink }) => ({
				parent,
				...(permalink ? { permalink } : {}),
			})),
			running,
			limit: access.settings.maxJobsPerUser,
			...(this.notices.has(user) ? { notice: this.notices.get(user) } : {}),
			...(admin ? { settings: { ...settings, ...access.settings } } : {}),
		});
		try {
			await client.views.publish({ user_id: user, view });
		} catch (error) {
			logger.warn(`Could not publish the Home tab of ${user}: ${errorSummary(error)}`);
		}
	}
}
