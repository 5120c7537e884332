import { errorSummary } from '../slack/errors';
import { webApi } from '@slack/bolt';
import type { ReadinessProbe } from '../http/health';
import type { WebhookRoute } from '../requests/webhook-receiver';
import type { Container } from './container';
import { ownOlderRecords, recoverUnfinishedWork } from './recovery';
import {
	buildContainer,
	jobWebhookHandler,
	serviceClients,
	type WorkspaceParts,
	type Workspaces,
} from './workspaces';

/**
 * The app in one workspace (SLACK_BOT_TOKEN): the bot token says which workspace (`auth.test` at
 * open), the app-wide organization and key serve it, and its jobs report to `webhookPath`.
 */
export class OneWorkspace implements Workspaces {
	readonly bolt: { token: string };
	readonly services: Container['services'];
	readonly webhookRoutes: Record<string, WebhookRoute>;
	readonly routes = {};
	readonly probes: ReadinessProbe[];
	private readonly closing = new AbortController();
	private recovery: Promise<void> = Promise.resolve();

	private constructor(
		private readonly container: Container,
		private readonly parts: WorkspaceParts,
		token: string,
		probes: ReadinessProbe[],
		webhook: WebhookRoute | undefined,
	) {
		this.bolt = { token };
		this.services = container.services;
		this.probes = probes;
		this.webhookRoutes = webhook ? { [parts.config.webhookPath]: webhook } : {};
	}

	/** Asks Slack whose the token is, and (with webhooks) reads the organization's secret, so a wrong key fails now. */
	static async open(parts: WorkspaceParts, token: string): Promise<OneWorkspace> {
		const { config, logger } = parts;
		const client = new webApi.WebClient(token, { ...parts.clientOptions, logger });
		const auth = await client.auth.test();
		if (!auth.team_id || !auth.user_id)
			throw new Error('Slack did not say which workspace and bot user the token belongs to.');
		const clients = serviceClients(parts, config.service);
		const container = buildContainer(parts, {
			client,
			identity: { team: auth.team_id, botUserId: auth.user_id },
			clients,
			config,
		});
		const probes: ReadinessProbe[] = [
			{ name: 'slack', check: () => client.auth.test() },
			{
				name: 'service',
				check: (signal) => clients.management.endpoints.list({ page: 1, page_size: 1 }, { signal }),
			},
		];
		// Read again when the organization rotates it.
		const webhook = config.publicUrl
			? jobWebhookHandler(parts, {
					management: clients.management,
					tracker: container.tracker,
					secret: config.service.webhookSecret ?? (await clients.management.webhookSecret.get()),
					scope: '',
				})
			: undefined;
		return new OneWorkspace(container, parts, token, probes, webhook);
	}

	counts(): Record<string, number> {
		return {};
	}

	async get(team: string): Promise<Container | undefined> {
		return team === this.container.team ? this.container : undefined;
	}

	async containers(): Promise<Container[]> {
		return [this.container];
	}

	recovered(): Promise<void> {
		return this.recovery;
	}

	register(): void {}

	/** In the background, as with many workspaces: the app serves while it catches up. */
	async start(): Promise<void> {
		this.recovery = this.recover().catch((error: unknown) =>
			this.parts.logger.error(`Could not resume unfinished work: ${errorSummary(error)}`),
		);
	}

	private async recover(): Promise<void> {
		const { state, shared, logger, clock, config } = this.parts;
		await ownOlderRecords(state, async () => [this.container.team], logger);
		await recoverUnfinishedWork(async (team) => this.get(team), {
			shared,
			logger,
			since: clock.now() - config.resumeWindowHours * 3600_000,
			signal: this.closing.signal,
		});
	}

	async close(): Promise<void> {
		this.closing.abort();
		this.container.tracker.stop();
	}
}
