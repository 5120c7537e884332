import type { webApi } from '@slack/bolt';
import { z } from 'zod/v4';
import type { Clock } from '../../shared/clock';
import { systemClock } from '../../shared/runtime';
import { CallBudget, LocalCallLedger, type CallLedger } from './call-budget';

/**
 * How every Slack Web API client of the app sends its calls. Slack does a call once per request and
 * has no idempotency key: when the answer to a call that posts a message is lost (the connection
 * drops, the client times out, a proxy answers 5xx), Slack may well have posted it, and sending it
 * again would show it twice. So those calls are never sent again by the client: it fails them with
 * `SlackAnswerLost`, and `SlackThreads` looks whether the message is there before posting again.
 * Reads and edits keep their retries. Every call goes through the process's `CallBudget` (Slack's
 * rate limits per workspace, counted with the other replicas' calls when they share Redis), which waits out and resends a call Slack refused with 429 (it stored
 * nothing); the WebClient's own 429 handling (a real-time sleep, then a retry among three) is off.
 */

/** Slack's retry default spans ~30 minutes; a chat app should give up within seconds. */
const SLACK_RETRY = { retries: 3, factor: 2, minTimeout: 500, maxTimeout: 5000 };
/** Longest wait for one answer from Slack. */
export const SLACK_TIMEOUT_MS = 30_000;

/** Web API methods that add a message (or text to one) each time Slack receives them. */
const POSTS_MESSAGE = new Set([
	'chat.postMessage',
	'chat.postEphemeral',
	'chat.meMessage',
	'chat.scheduleMessage',
	'chat.startStream',
	'chat.appendStream',
	'chat.stopStream',
	'files.completeUploadExternal',
]);

/** Connection failures that mean the request never reached Slack: sending it again posts nothing twice. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** A call that posts a message went out and no answer came back: Slack may or may not have posted it. */
export class SlackAnswerLost extends Error {
	constructor(
		readonly method: string,
		cause: unknown,
	) {
		super(
			`Slack did not answer ${method}, which may have posted it (${cause instanceof Error ? cause.message : String(cause)}).`,
			{ cause },
		);
		this.name = 'SlackAnswerLost';
	}
}

/** Slack's Web API, unless the configuration names another (the stand-in). */
const SLACK_API_URL = 'https://slack.com/api/';
/** Calls the budget holds back wait in it, not in the WebClient's queue (100 at a time, first come first served). */
const MAX_REQUEST_CONCURRENCY = 10_000;

/**
 * The WebClient options of every Slack client the app builds (Bolt's, and each workspace's): call
 * this once per process, so that its clients share one budget per workspace.
 */
export function slackClientOptions(
	slackApiUrl?: string,
	/** Wraps the client's fetch (the app's metrics count each call there). */
	observe: (fetch: webApi.FetchFunction) => webApi.FetchFunction = (fetch) => fetch,
	/** The budget's clock. */
	clock: Clock = systemClock,
	/** Where the budget counts calls: this process's memory, or Redis when replicas share it. */
	ledger: CallLedger = new LocalCallLedger(clock),
): webApi.WebClientOptions {
	const budget = new CallBudget(clock, slackApiUrl ?? SLACK_API_URL, SLACK_TIMEOUT_MS, ledger);
	// p-retry (under the WebClient) stops retrying when `onFailedAttempt` throws; RetryOptions does not declare it.
	const retryConfig: webApi.RetryOptions & { onFailedAttempt: (error: Error) => void } = {
		...SLACK_RETRY,
		onFailedAttempt: (error) => {
			// The WebClient wraps what `fetch` threw as a request error's `original`.
			const original = 'original' in error ? error.original : undefined;
			if (original instanceof SlackAnswerLost) throw original;
		},
	};
	return {
		...(slackApiUrl ? { slackApiUrl } : {}),
		retryConfig,
		// The budget times each call from when it is sent; the client's timeout would count the wait for the budget too.
		timeout: 0,
		// The budget has resent it as often as makes sense: the caller hears of it at once.
		rejectRateLimitedCalls: true,
		maxRequestConcurrency: MAX_REQUEST_CONCURRENCY,
		fetch: budget.wrap(observe(fetchNoticingLostAnswers)),
	};
}

const fetchNoticingLostAnswers: webApi.FetchFunction = async (url, init) => {
	const method = new URL(url).pathname.split('/').pop() ?? '';
	if (!POSTS_MESSAGE.has(method)) return fetch(url, init);
	let response: Response;
	try {
		response = await fetch(url, init);
	} catch (error) {
		throw neverSent(error) ? error : new SlackAnswerLost(method, error);
	}
	// Slack answers 200, or 429 when it stored nothing; anything else came from something in between.
	if (response.status !== 200 && response.status !== 429)
		throw new SlackAnswerLost(method, new Error(`HTTP ${response.status}`));
	let body: ArrayBuffer;
	try {
		// Read whole here, so an answer cut off midway counts as lost too.
		body = await response.arrayBuffer();
	} catch (error) {
		throw new SlackAnswerLost(method, error);
	}
	return new Response(body, {
		status: response.status,
		statusText: response.statusText,
		headers: response.headers,
	});
};

function neverSent(error: unknown): boolean {
	const cause = error instanceof Error ? error.cause : undefined;
	return cause instanceof Error && 'code' in cause && NEVER_SENT.has(String(cause.code));
}

type FetchAnswer = Awaited<ReturnType<webApi.FetchFunction>>;

/** An answer read whole by whoever looks at it first, and a copy for the WebClient to read instead. */
export async function readWhole(
	response: FetchAnswer,
): Promise<{ text: string; copy: FetchAnswer }> {
	const bytes = await response.arrayBuffer();
	const text = new TextDecoder().decode(bytes);
	return {
		text,
		copy: {
			ok: response.ok,
			status: response.status,
			statusText: response.statusText,
			url: response.url,
			headers: response.headers,
			arrayBuffer: async () => bytes,
			json: async (): Promise<unknown> => JSON.parse(text),
			text: async () => text,
		},
	};
}

const refusalSchema = z.object({
	ok: z.literal(false),
	// Slack's error codes are short snake_case words; anything else is not quoted on.
	error: z
		.string()
		.regex(/^[a-z_]{1,64}$/)
		.catch('unknown'),
	needed: z
		.string()
		.regex(/^[a-z_:.,]{1,200}$/)
		.optional()
		.catch(undefined),
});

/** Slack's `{ ok: false, error }` answer (with the scope it wanted, when it says); undefined for any other text. */
export function slackRefusal(text: string): { error: string; needed?: string } | undefined {
	let body: unknown;
	try {
		body = JSON.parse(text);
	} catch {
		return undefined;
	}
	const refusal = refusalSchema.safeParse(body);
	return refusal.success ? refusal.data : undefined;
}
