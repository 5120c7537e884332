/**
 * The floor of the many-workspaces benchmark (bench/slack-workspaces.ts): a minimal Bolt app whose
 * authorize reads each request's installation through @slack/oauth from a SQLite file
 * (`FLOOR_DB`, table `installations(install_key, installation)`), answering `/gpu` with one
 * `chat.postMessage`. It prints `ready` once listening on `PORT`.
 */
import { DatabaseSync } from 'node:sqlite';
import { App } from '@slack/bolt';
import { InstallProvider, type Installation } from '@slack/oauth';

const env = (name: string): string => {
	const value = process.env[name];
	if (!value) throw new Error(`${name} is required.`);
	return value;
};

const db = new DatabaseSync(env('FLOOR_DB'));
const find = db.prepare('SELECT installation FROM installations WHERE install_key = ?');
const installer = new InstallProvider({
	clientId: '1111.2222',
	clientSecret: 'floor-client-secret',
	stateSecret: 'floor-state-secret',
	installationStore: {
		storeInstallation: async () => undefined,
		fetchInstallation: async (query) => {
			const [row] = find.all(query.teamId ?? '');
			if (!row || typeof row.installation !== 'string') throw new Error('Not installed.');
			return JSON.parse(row.installation) as Installation<'v2', false>;
		},
	},
});
const app = new App({
	signingSecret: env('SLACK_SIGNING_SECRET'),
	authorize: (source) => installer.authorize(source),
	clientOptions: { slackApiUrl: env('SLACK_API_URL') },
	customRoutes: [
		{
			path: '/healthz',
			method: ['GET'],
			handler: (_req, res) => {
				res.writeHead(200, { 'content-type': 'application/json' });
				res.end('{"status":"ok"}');
			},
		},
	],
});
app.command('/gpu', async ({ ack, client, command }) => {
	await ack();
	await client.chat.postMessage({
		channel: command.channel_id,
		text: `Working on ${command.text}`,
	});
});
void app.start(Number(env('PORT'))).then(() => console.log('ready'));
