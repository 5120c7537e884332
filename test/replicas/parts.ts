import { fork, type ChildProcess } from 'node:child_process';
import { z } from 'zod/v4';
import { startEmulator } from '../../emulator';
import { startFileHost } from '../support/media-server';
import { localSlackCredentials } from '../../slack-app/local';
import { BOT, startStandin, type Standin } from '../../slack-standin';
import { kill } from '../reliability/slack-process';
import { overLimits } from '../slack/over-limits';

/**
 * The parts around the replicas (the service emulator, the Slack stand-in),
 * each in a child process of its own, driven over IPC: under a burst of a thousand commands the
 * replicas, not a process shared by everything else, are what is measured. The same module is the
 * child (started with CHILD_FLAG) and the parent's handle on it.
 */

const CHILD_FLAG = '--replica-part';
const START_TIMEOUT_MS = 60_000;
/** The emulator's pauses between webhook attempts, given here so that its last attempt is known. */
const WEBHOOK_RETRY_DELAYS_MS = [500, 1000, 2000];
const LAST_WEBHOOK_ATTEMPT = WEBHOOK_RETRY_DELAYS_MS.length + 1;

const partSchema = z.enum(['emulator', 'standin']);
type Part = z.infer<typeof partSchema>;

const emulatorSettingsSchema = z.object({
	jobDurationMs: z.number().int().min(0),
	/** Per key, as the service counts; false turns it off. */
	rateLimitPerMinute: z.union([z.number().int().min(0), z.literal(false)]),
});
export type EmulatorSettings = z.infer<typeof emulatorSettingsSchema>;

const serviceSchema = z.object({
	baseUrl: z.string(),
	imageUrl: z.string(),
	chatUrl: z.string(),
	apiKey: z.string(),
	organization: z.string(),
	webhookSecret: z.string(),
	genericEndpoint: z.string(),
});
type ServiceInfo = z.infer<typeof serviceSchema>;

const emulatorStatsSchema = z.object({
	jobsCreated: z.number(),
	jobsSucceeded: z.number(),
	/** Management requests answered with 429 (the key's limit). */
	answered429: z.number(),
	deliveryAttempts: z.number(),
	deliveriesFailed: z.number(),
	/** Webhook deliveries that gave up after their last attempt. */
	deliveriesAbandoned: z.number(),
});
export type EmulatorStats = z.infer<typeof emulatorStatsSchema>;

const slackSchema = z.object({
	apiUrl: z.string(),
	botToken: z.string(),
	signingSecret: z.string(),
});
type SlackInfo = z.infer<typeof slackSchema>;

/** What Slack's rate limits made of the app's calls, from the stand-in's record of them. */
const limitsSchema = z.object({
	/** Calls Slack answered with 429, by method. */
	refused: z.record(z.string(), z.number()),
	/** Methods (and channels) whose calls Slack carried out beyond their limit in some window. */
	over: z.array(z.string()),
});
export type SlackLimits = z.infer<typeof limitsSchema>;

const commandsSchema = z.object({
	channel: z.string(),
	/** Each command's own channel, if not `channel`. */
	commands: z.array(
		z.object({ user: z.string(), text: z.string(), channel: z.string().optional() }),
	),
});

/** One channel, or several read as one (a burst from many channels). */
const channelsSchema = z
	.union([z.string(), z.array(z.string())])
	.transform((channel) => (typeof channel === 'string' ? [channel] : channel));

const waitSchema = z.object({
	channel: z.union([z.string(), z.array(z.string())]),
	/** `parents`: that many of the app's top-level messages; `results`: each of them has a reply. */
	until: z.enum(['parents', 'results']),
	count: z.number().int().min(0),
	timeoutMs: z.number().int().min(1),
});

/** When a wait ended (epoch ms, this machine's clock) and whether it ran out of time. */
const waitedSchema = z.object({ at: z.number(), timedOut: z.boolean() });
type Waited = z.infer<typeof waitedSchema>;

const threadsSchema = z.object({
	/** Replies in each of the app's top-level messages of the channel, oldest first. */
	replies: z.array(z.number().int()),
});
type Threads = z.infer<typeof threadsSchema>;

const requestSchema = z.object({ id: z.number(), method: z.string(), args: z.unknown() });
const replySchema = z.union([
	z.object({ id: z.number(), result: z.unknown() }),
	z.object({ id: z.number(), error: z.string() }),
]);

type Handlers = Record<string, (args: unknown) => unknown>;

/** The replies in each of the app's top-level messages of the channels, oldest first in each (from the workspace's indexes). */
function repliesPerParent(standin: Standin, channels: string[]): number[] {
	const { workspace } = standin;
	return channels.flatMap((channel) =>
		workspace
			.channelMessages(channel)
			.filter((message) => message.user === BOT.userId)
			.map((parent) => workspace.replies(channel, parent.ts).length),
	);
}

function waitFor(standin: Standin, args: unknown): Promise<Waited> {
	const { channel, until, count, timeoutMs } = waitSchema.parse(args);
	const channels = channelsSchema.parse(channel);
	const met = () => {
		const threads = repliesPerParent(standin, channels);
		if (threads.length < count) return false;
		return until === 'parents' || threads.every((replies) => replies > 0);
	};
	return standin.waitFor(met, timeoutMs, `${count} ${until}`).then(
		() => ({ at: Date.now(), timedOut: false }),
		() => ({ at: Date.now(), timedOut: true }),
	);
}

/** Starts the part and returns its handlers; the first, `info`, says where it is. */
async function startPart(part: Part, settings: unknown): Promise<Handlers> {
	if (part === 'emulator') {
		const options = emulatorSettingsSchema.parse(settings);
		// The recordings behind the made-up URLs of the commands.
		const fileHost = await startFileHost();
		const emulator = await startEmulator({
			port: 0,
			webhookRetryDelaysMs: WEBHOOK_RETRY_DELAYS_MS,
			mediaHosts: fileHost.mediaHosts,
			...options,
		});
		return {
			info: (): ServiceInfo => ({
				baseUrl: emulator.baseUrl,
				imageUrl: emulator.imageUrl,
				chatUrl: emulator.chatUrl,
				apiKey: emulator.apiKey,
				organization: emulator.organization,
				webhookSecret: emulator.webhookSecret,
				genericEndpoint: emulator.genericEndpoint,
			}),
			stats: (): EmulatorStats => {
				const jobs = emulator.jobsOf(emulator.organization);
				const failed = emulator.deliveries.filter((attempt) => !attempt.ok);
				return {
					jobsCreated: jobs.length,
					jobsSucceeded: jobs.filter((job) => job.status === 'succeeded').length,
					answered429: emulator.requests.filter((request) => request.status === 429).length,
					deliveryAttempts: emulator.deliveries.length,
					deliveriesFailed: failed.length,
					deliveriesAbandoned: new Set(
						failed
							.filter((attempt) => attempt.attempt >= LAST_WEBHOOK_ATTEMPT)
							.map((attempt) => attempt.jobId),
					).size,
				};
			},
			close: async () => {
				await emulator.close();
				await fileHost.close();
			},
		};
	}
	// The Slack stand-in, at Slack's rate limits.
	const credentials = localSlackCredentials();
	const standin = await startStandin({ ...credentials, nativeStreaming: true });
	return {
		info: (): SlackInfo => ({ apiUrl: standin.apiUrl, ...credentials }),
		setAppUrl: (args) => standin.setAppUrl(z.string().parse(args)),
		commandBodies: (args) => {
			const { channel, commands } = commandsSchema.parse(args);
			return commands.map((command) =>
				standin.app.slashCommandBody({ ...command, channel: command.channel ?? channel }),
			);
		},
		waitFor: (args) => waitFor(standin, args),
		threads: (args): Threads => {
			return { replies: repliesPerParent(standin, channelsSchema.parse(args)) };
		},
		limits: (): SlackLimits => {
			const refused: Record<string, number> = {};
			for (const call of standin.api.calls)
				if (call.status === 429) refused[call.method] = (refused[call.method] ?? 0) + 1;
			return { refused, over: overLimits(standin.api.calls) };
		},
		close: () => standin.close(),
	};
}

/** The child: starts its part from the first message, then answers calls until disconnected. */
function serve(): void {
	let handlers: Promise<Handlers> | undefined;
	process.on('message', (message) => {
		const { id, method, args } = requestSchema.parse(message);
		void (async () => {
			try {
				if (method === 'start') {
					const { part, settings } = z
						.object({ part: partSchema, settings: z.unknown() })
						.parse(args);
					handlers = startPart(part, settings);
				}
				const running = await handlers;
				const handler = running?.[method === 'start' ? 'info' : method];
				if (!handler) throw new Error(`No ${method} here`);
				process.send?.({ id, result: await handler(args) });
			} catch (error) {
				process.send?.({ id, error: error instanceof Error ? error.message : String(error) });
			}
		})();
	});
	process.once('disconnect', () => {
		void Promise.resolve(handlers)
			.then((running) => running?.close?.(undefined))
			.finally(() => process.exit(0));
	});
}

/** The parent's handle on one part: calls answered in any order, matched by id. */
class PartProcess {
	private nextId = 0;
	private readonly pending = new Map<number, (reply: z.infer<typeof replySchema>) => void>();

	private constructor(
		readonly child: ChildProcess,
		private readonly part: Part,
	) {
		child.on('message', (message) => {
			const reply = replySchema.parse(message);
			this.pending.get(reply.id)?.(reply);
			this.pending.delete(reply.id);
		});
		child.once('exit', (code, signal) => {
			for (const [id, settle] of this.pending)
				settle({ id, error: `The ${this.part} process exited (${code ?? signal})` });
			this.pending.clear();
		});
	}

	/** Forks the part's process and resolves with its handle and what `info` says. */
	static async start<T>(
		part: Part,
		settings: unknown,
		infoSchema: z.ZodType<T>,
	): Promise<{ handle: PartProcess; info: T }> {
		// tsx as a loader, not its CLI (which would fork): killing the child stops the part.
		const child = fork(__filename, [CHILD_FLAG], {
			execArgv: ['--import', 'tsx'],
			stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
		});
		const handle = new PartProcess(child, part);
		try {
			const info = await handle.call('start', { part, settings }, infoSchema, START_TIMEOUT_MS);
			return { handle, info };
		} catch (error) {
			await handle.stop();
			throw error;
		}
	}

	call<T>(method: string, args: unknown, schema: z.ZodType<T>, timeoutMs?: number): Promise<T> {
		const id = this.nextId++;
		return new Promise<T>((resolve, reject) => {
			const timer =
				timeoutMs === undefined
					? undefined
					: setTimeout(() => {
							this.pending.delete(id);
							reject(new Error(`The ${this.part} process did not answer ${method} in time`));
						}, timeoutMs);
			this.pending.set(id, (reply) => {
				clearTimeout(timer);
				if ('error' in reply) reject(new Error(`${this.part}: ${reply.error}`));
				else resolve(schema.parse(reply.result));
			});
			this.child.send({ id, method, args });
		});
	}

	/** Lets the part close its servers, then makes sure the process is gone. */
	async stop(): Promise<void> {
		if (this.child.exitCode !== null || this.child.signalCode !== null) return;
		const exited = new Promise((resolve) => this.child.once('exit', resolve));
		if (this.child.connected) this.child.disconnect();
		const timer = setTimeout(() => void kill(this.child, 'SIGKILL'), 10_000);
		await exited;
		clearTimeout(timer);
	}
}

/** The service emulator in its own process. */
export async function startEmulatorProcess(settings: EmulatorSettings) {
	const { handle: part, info } = await PartProcess.start('emulator', settings, serviceSchema);
	return {
		part,
		service: info,
		stats: () => part.call('stats', undefined, emulatorStatsSchema),
	};
}

/** The Slack stand-in in its own process: Slack's side of the commands and where results land. */
export async function startStandinProcess() {
	const { handle: part, info } = await PartProcess.start('standin', undefined, slackSchema);
	return {
		part,
		slack: info,
		setAppUrl: (url: string) => part.call('setAppUrl', url, z.unknown()),
		commandBodies: (args: z.infer<typeof commandsSchema>) =>
			part.call('commandBodies', args, z.array(z.string())),
		waitFor: (args: z.infer<typeof waitSchema>) =>
			part.call('waitFor', args, waitedSchema, args.timeoutMs + 30_000),
		threads: (channel: string | string[]) => part.call('threads', channel, threadsSchema),
		limits: () => part.call('limits', undefined, limitsSchema),
	};
}

if (require.main === module && process.argv.includes(CHILD_FLAG)) serve();
