import { webApi } from '@slack/bolt';
import { systemClock } from '../../shared/runtime';
import { freePort, localSlackCredentials } from '../../slack-app/local';
import { SlackThreads } from '../../slack-app/slack/slack-thread';
import { BOT, startStandin, type Standin } from '../../slack-standin';

/** The Slack stand-in and the app's thread writer on it, without the rest of the app: for testing one service alone. */
export async function standinThreads(): Promise<{ standin: Standin; threads: SlackThreads }> {
	const credentials = localSlackCredentials();
	const standin = await startStandin({
		...credentials,
		port: await freePort(),
		nativeStreaming: false,
		// Raised tenfold: the thread writer runs here without the app's call budget (which keeps to
		// Slack's limits, see rate-limits.test.ts), and tests post a few messages at once per channel.
		rateLimits: { factor: 10 },
	});
	// No retries: a refusal the test asks for reaches the code under test at once.
	const client = new webApi.WebClient(credentials.botToken, {
		slackApiUrl: standin.apiUrl,
		retryConfig: { retries: 0 },
	});
	return { standin, threads: new SlackThreads(client, () => BOT.userId, systemClock) };
}
