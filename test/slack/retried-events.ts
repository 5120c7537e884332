import { BOT, DIRECT_MESSAGE, slackSignature, type StoredMessage } from '../../slack-standin';
import type { Stack } from './harness';

/**
 * Slack's retries of an Events API delivery: when it sees no 2xx within 3 s (a replica under load,
 * or one that died) it sends the same body again, to whichever replica the load balancer picks,
 * with a new timestamp (so a new signature) and `X-Slack-Retry-Num`.
 */

const PERSON = 'U0RETRY';

/** Sends `body` signed as Slack would at `timestampSeconds`; `retryNum` marks one of Slack's retries. */
export async function deliver(
	eventsUrl: string,
	signingSecret: string,
	body: string,
	{ timestampSeconds, retryNum }: { timestampSeconds: number; retryNum?: number },
): Promise<number> {
	const headers: Record<string, string> = {
		'content-type': 'application/json',
		'x-slack-request-timestamp': String(timestampSeconds),
		'x-slack-signature': slackSignature(signingSecret, timestampSeconds, body),
	};
	if (retryNum !== undefined) {
		headers['x-slack-retry-num'] = String(retryNum);
		headers['x-slack-retry-reason'] = 'http_timeout';
	}
	return (await fetch(eventsUrl, { method: 'POST', headers, body })).status;
}

/** A person's message to the app in its direct messages (its Messages tab). */
export function directMessage(stack: Stack, text: string): StoredMessage {
	return stack.standin.workspace.post({ channel: DIRECT_MESSAGE.id, user: PERSON, text });
}

/** An assistant thread in the app's direct messages, with the person's first question in it. */
export function assistantQuestion(stack: Stack, text: string): StoredMessage {
	const { workspace } = stack.standin;
	const root = workspace.post({
		channel: DIRECT_MESSAGE.id,
		user: BOT.userId,
		botId: BOT.botId,
		text: 'New assistant thread',
	});
	workspace.assistantThread(DIRECT_MESSAGE.id, root.ts);
	return workspace.post({ channel: DIRECT_MESSAGE.id, user: PERSON, text, threadTs: root.ts });
}

/** The app's finished answers in a thread of its direct messages. */
export function finishedAnswers(stack: Stack, threadTs: string): StoredMessage[] | undefined {
	const answers = stack
		.replies(threadTs, DIRECT_MESSAGE.id)
		.filter((message) => message.user === BOT.userId);
	return answers.length > 0 && answers.every((answer) => !answer.streaming) ? answers : undefined;
}

export const modelCalls = (stack: Stack): number =>
	stack.serviceCalls('POST', /\/v1\/chat\/completions$/);
