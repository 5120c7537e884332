import { randomUUID } from 'node:crypto';
import type { Logger } from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import { noticeMessage } from '../messages/errors';
import { parentMessage, sessionTitle, type ParentView } from '../messages/parent';
import { errorParts } from '../messages/results';
import type { RequestKind, ResultPart, ThreadRef } from '../model';
import type { AccessPolicy } from './access';
import { describeError, errorSummary, isLastingRefusal, slackErrorCode } from '../slack/errors';
import type { PrivateReply, RequestContext } from './outcome';
import type { DeliveryRecord } from './delivery-record';
import type { AgentSessions } from '../slack/agent-sessions';
import { cannotPostMessage } from '../slack/slack-errors';
import type { MessagePayload, SlackThreads } from '../slack/slack-thread';
import type { InflightRecords, InflightRequest } from '../state/state-file';

/**
 * Every /gpu request, whatever its kind, runs through here in the same steps:
 *
 *   check access (and the kind's own checks) → reserve one of the user's slots → post or edit the
 *   parent → record the request → work in the background → deliver the result or the failure once
 *   (DeliveryRecord) → release the slot and the record, in one `finally`.
 *
 * The services keep only what is special about their kind: what to check, what the parent says and
 * what the work is. A job's work hands the job to the JobTracker and waits until it stops using a GPU;
 * the tracker delivers its result.
 */

/** How a request ended; `followed` when the JobTracker delivers it (jobs). */
export type Ending =
	| { state: 'succeeded' | 'failed'; parts?: ResultPart[] }
	| { state: 'followed' };

export const FOLLOWED: Ending = { state: 'followed' };

/** A request under way, as its work sees it. */
export interface ActiveRequest {
	/** Names the request in keys, job metadata and logs. */
	readonly ref: string;
	readonly user: string;
	readonly thread: ThreadRef;
	/**
	 * From here a restart can take the request over (its job exists in the service), so a shutdown
	 * need not wait for the rest. Work that never says so is waited for to its end.
	 */
	handedOver(): void;
}

/** Where a request shows: a new parent message in the asker's channel, or a thread it continues. */
export type RequestPlace =
	| { kind: 'new'; parent: ParentView; payload?: MessagePayload }
	| { kind: 'thread'; thread: ThreadRef; parent?: ParentView; messageTs?: string }
	/** A new parent as a reply in another's thread (a shared file's): the results follow it there. */
	| { kind: 'reply'; thread: ThreadRef; parent: ParentView };

export interface RequestPlan {
	context: RequestContext;
	kind: RequestKind;
	/** The kind's own checks, after access and before anything is reserved or posted. */
	checks?: () => PrivateReply | Promise<PrivateReply>;
	/** GPU work holds one of the user's slots while it runs; creating a queue does not. */
	usesSlot: boolean;
	place: RequestPlace;
	/** Recorded while the request runs, so a restart or another replica can redo or flag it (images, chat). */
	remember?: Pick<InflightRequest, 'image' | 'prompt'>;
	/** What a failure is called in the thread ("Creating the queue"); without it a failure is only logged. */
	failure?: string;
	/** The thread's session title where no parent names the request (a conversation's question). */
	title?: string;
	work: (request: ActiveRequest) => Promise<Ending>;
}

/**
 * Work the app takes over (adopts) from before a restart or from a replica that stopped: its slot is
 * counted even past the limit, it runs already.
 */
export interface AdoptedPlan {
	ref: string;
	user: string;
	kind: RequestKind;
	thread: ThreadRef;
	startedAt: number;
	parent?: ParentView;
	/** The request is recorded already (state file or Redis); its record ends with it. */
	remembered: boolean;
	failure?: string;
	work: (request: ActiveRequest) => Promise<Ending>;
}

export interface RequestLifecycleOptions {
	/** The workspace the requests are made in; their records say so, for whoever resumes them. */
	team: string;
	access: AccessPolicy;
	threads: SlackThreads;
	/**
	 * Where images and answers under way are recorded, held by this process, for a restart or another
	 * replica to take over: the app's SharedState (a state file alone records them for one process).
	 */
	state: InflightRecords;
	deliveries: DeliveryRecord;
	clock: Clock;
	logger: Logger;
	/** Each request's thread is an agent session while the work runs (Slack's stop button). */
	sessions?: AgentSessions;
}

interface Started {
	ref: string;
	user: string;
	kind: RequestKind;
	usesSlot: boolean;
	startedAt: number;
	failure?: string;
	/** Set for a request started here: its session is opened with this title (adopted ones have theirs). */
	title?: string;
	work: (request: ActiveRequest) => Promise<Ending>;
}

const DRAINING_NOTICE =
	'GPU Cloud is restarting and takes no new requests just now. Try again in a minute.';

export class RequestLifecycle {
	/** Requests acknowledged and not yet at a point a restart can take over from, by ref. */
	private readonly unsettled = new Map<string, Promise<void>>();
	private accepting = true;

	constructor(private readonly options: RequestLifecycleOptions) {}

	/**
	 * Runs a new request. Resolves with what only the asker sees (a refusal, or why the parent could
	 * not be posted) as soon as the parent is up; the work goes on in the background.
	 */
	async start(plan: RequestPlan): Promise<PrivateReply> {
		const { access, clock, team } = this.options;
		const { context } = plan;
		const refused = this.refusal(context) ?? (await plan.checks?.());
		if (refused) return refused;
		// A drain may have begun while the checks ran.
		if (!this.accepting) return noticeMessage(DRAINING_NOTICE);
		const ref = randomUUID();
		if (plan.usesSlot) {
			const full = await access.acquire(context.user, ref);
			if (full) return access.deniedReply(full);
		}
		const started: Started = {
			ref,
			user: context.user,
			kind: plan.kind,
			usesSlot: plan.usesSlot,
			startedAt: clock.now(),
			failure: plan.failure,
			title:
				plan.title ??
				(plan.place.parent ? sessionTitle(plan.place.parent.subject) : sessionTitleOf(plan.kind)),
			work: plan.work,
		};
		const place = plan.place;
		return new Promise<PrivateReply>((reply, fail) => {
			this.run(started, place.parent, reply, async () => {
				let thread: ThreadRef;
				try {
					thread = await this.show(context, plan.kind, place, ref);
				} catch (error) {
					const message = cannotPostMessage(error);
					if (!message) throw error;
					reply(message);
					return undefined;
				}
				if (plan.remember) {
					const messageTs =
						place.kind === 'thread' ? (place.messageTs ?? thread.threadTs) : thread.threadTs;
					await this.options.state.startInflight({
						ref,
						team,
						kind: inflightKind(plan.kind),
						channel: thread.channel,
						threadTs: thread.threadTs,
						messageTs,
						user: context.user,
						startedAt: started.startedAt,
						...plan.remember,
					});
				}
				return { thread, remembered: plan.remember !== undefined };
			}).catch(fail);
		});
	}

	/** A request the app cannot take (a feature is off): the access refusal first, so a denied user learns nothing more. */
	refuse(context: RequestContext, reply: NonNullable<PrivateReply>): PrivateReply {
		return this.refusal(context) ?? reply;
	}

	/** Why `context` may not make a request now (draining, access), if it may not. */
	refusal(context: RequestContext): PrivateReply {
		if (!this.accepting) return noticeMessage(DRAINING_NOTICE);
		return this.options.access.refusal(context.user, context.channel);
	}

	/** Takes up (adopts) work under way before a restart, or on a replica that stopped. */
	adopt(plan: AdoptedPlan): void {
		this.options.access.adopt(plan.user, plan.ref);
		const started: Started = { ...plan, usesSlot: true };
		void this.run(
			started,
			plan.parent,
			() => undefined,
			() => Promise.resolve({ thread: plan.thread, remembered: plan.remembered }),
		);
	}

	/** Acknowledged requests not yet handed over or finished. */
	inFlight(): number {
		return this.unsettled.size;
	}

	/** Resolves when every request taken so far is finished or handed over (tests, shutdown). */
	async idle(): Promise<void> {
		while (this.unsettled.size > 0) await Promise.all([...this.unsettled.values()]);
	}

	/**
	 * For a graceful shutdown: takes no new requests from now on (each gets a private "restarting"
	 * notice), then resolves once every request already taken is finished or handed over.
	 */
	async drain(): Promise<void> {
		this.accepting = false;
		await this.idle();
	}

	/**
	 * The one place a request's slot and record are released. `begin` posts the parent and records the
	 * request (undefined when it could not post); `answer` gets the private reply once the parent is up.
	 */
	private run(
		request: Started,
		parent: ParentView | undefined,
		answer: (reply: PrivateReply) => void,
		begin: () => Promise<{ thread: ThreadRef; remembered: boolean } | undefined>,
	): Promise<void> {
		const { access, logger } = this.options;
		let settle = () => {};
		const settled = new Promise<void>((resolve) => (settle = resolve));
		this.unsettled.set(request.ref, settled);
		const handedOver = () => {
			this.unsettled.delete(request.ref);
			settle();
		};
		let remembered = false;
		let answered = false;
		const lifetime = (async () => {
			try {
				const begun = await begin();
				if (!begun) return;
				remembered = begun.remembered;
				answered = true;
				answer(undefined);
				await this.carryOut(request, begun.thread, parent, handedOver);
			} finally {
				if (request.usesSlot) await access.release(request.user, request.ref);
				if (remembered) await this.options.state.endInflight(request.ref);
				handedOver();
			}
		})();
		// A failure before the parent is up reaches the caller of `start`; later ones are logged here.
		lifetime.catch((error: unknown) => {
			if (answered)
				logger.error(`${describeKind(request)} ${request.ref} failed: ${errorSummary(error)}`);
		});
		return lifetime;
	}

	private async show(
		context: RequestContext,
		kind: RequestKind,
		place: RequestPlace,
		ref: string,
	): Promise<ThreadRef> {
		const { threads } = this.options;
		if (place.kind === 'reply') {
			const parentTs = await threads.postParentReply(place.thread, parentMessage(place.parent), {
				kind,
				user: context.user,
				ref,
			});
			return { channel: place.thread.channel, threadTs: place.thread.threadTs, parentTs };
		}
		if (place.kind === 'thread') {
			if (place.parent)
				await threads.update(
					place.thread.channel,
					place.thread.threadTs,
					parentMessage(place.parent),
				);
			return place.thread;
		}
		const threadTs = await threads.postParent(context.channel, parentMessage(place.parent), {
			kind,
			user: context.user,
			...place.payload,
			ref,
		});
		return { channel: context.channel, threadTs };
	}

	/** Runs the work and delivers how it ended, once, however it ended. */
	private async carryOut(
		request: Started,
		thread: ThreadRef,
		parent: ParentView | undefined,
		handedOver: () => void,
	): Promise<void> {
		const { deliveries, threads, clock, logger, sessions } = this.options;
		// Slack shows the work (and its stop button) while it runs; the two go on side by side.
		const opened =
			request.title === undefined ? undefined : sessions?.processing(thread, request.title);
		let ending: Ending;
		try {
			ending = await request.work({ ref: request.ref, user: request.user, thread, handedOver });
		} catch (error) {
			logger.warn(`${describeKind(request)} ${request.ref} failed: ${errorSummary(error)}`);
			ending = {
				state: 'failed',
				parts: request.failure
					? errorParts(request.ref, request.failure, describeError(error))
					: [],
			};
		}
		await opened;
		// A followed job's session ends with the job (JobTracker).
		if (ending.state === 'followed') return;
		// The parent says how it ended, never why: the why is in the thread, once.
		const finish = (state: 'succeeded' | 'failed') =>
			parent
				? () =>
						threads.update(
							thread.channel,
							thread.parentTs ?? thread.threadTs,
							parentMessage({
								...parent,
								state,
								note: undefined,
								elapsedMs: clock.now() - request.startedAt,
							}),
						)
				: undefined;
		try {
			await deliveries.deliver(request.ref, thread, {
				parts: ending.parts ?? [],
				finish: finish(ending.state),
			});
		} catch (error) {
			// Slack refusing the result itself (the bot may not share files there...) will refuse it
			// at every start too: the request ends as failed, and its thread says why.
			const refusal = slackErrorCode(error);
			if (ending.state !== 'succeeded' || !refusal || !isLastingRefusal(refusal)) throw error;
			logger.warn(
				`${describeKind(request)} ${request.ref}: Slack refused its result (${refusal}); it ends as failed.`,
			);
			await deliveries.deliver(request.ref, thread, {
				parts: errorParts(
					request.ref,
					request.failure ?? 'Posting the result',
					`Slack refused to post the result here (\`${refusal}\`).`,
				),
				finish: finish('failed'),
			});
		}
		await sessions?.settle(thread, request.kind === 'chat' ? 'active' : 'closed');
	}
}

function inflightKind(kind: RequestKind): InflightRequest['kind'] {
	if (kind === 'image' || kind === 'chat') return kind;
	throw new Error(`A ${kind} request is not recorded while it runs; the service keeps it.`);
}

function describeKind(request: Started): string {
	return `${request.kind[0].toUpperCase()}${request.kind.slice(1)} request`;
}

function sessionTitleOf(kind: RequestKind): string {
	return `GPU Cloud ${kind}`;
}
