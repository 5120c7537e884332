import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { LINK_VIEW } from '../../slack-app/messages/link-workspace';
import { kill } from '../reliability/slack-process';
import { eventually } from '../support/eventually';

/**
 * `npm start -- --several-workspaces` (docs/slack-app.md, "Try it locally"): the whole admin path on
 * one machine, as the page's person would walk it: the install link, the stand-in's consent page,
 * back to the app; `/gpu setup` on the page with the emulator's organization and key; then a command
 * that lands in the channel. Before, the local start had no multi-workspace mode at all.
 */

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');

interface PageState {
	messages: { user: string; text: string; bot: boolean }[];
	ephemerals: { text: string }[];
	view: { id: string; view: { callback_id?: string } } | null;
}

it('walks the OAuth install, /gpu setup and a command on the stand-ins', async () => {
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([name]) => !/^(SLACK_|GPU_CLOUD_|PORT$|npm_)/.test(name)),
	);
	const child = spawn(
		process.execPath,
		['--import', 'tsx', join(ROOT, 'slack-app', 'start.ts'), '--several-workspaces'],
		{ cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
	);
	let output = '';
	child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
	try {
		const printed = await eventually(
			'the install instructions',
			() => {
				if (child.exitCode !== null) throw new Error(`npm start exited:\n${output}`);
				const install = /Install it: open (\S+)/.exec(output)?.[1];
				const page = /Open (http\S+) and type \/gpu setup/.exec(output)?.[1];
				const key = /organization (\S+), API key (\S+) /.exec(output);
				return install && page && key
					? { install, page, organization: key[1], apiKey: key[2] }
					: undefined;
			},
			{ timeoutMs: 90_000, intervalMs: 200 },
		);
		// The browser: the install link, the stand-in's consent page, back to the app.
		const start = await fetch(printed.install, { redirect: 'manual' });
		expect(start.status).toBe(302);
		const cookie = start.headers.get('set-cookie')?.split(';')[0] ?? '';
		const consent = await fetch(start.headers.get('location') ?? '', { redirect: 'manual' });
		expect(consent.status).toBe(302);
		const done = await fetch(consent.headers.get('location') ?? '', {
			headers: { cookie },
			redirect: 'manual',
		});
		expect(done.status).toBe(200);
		expect(await done.text()).toContain('/gpu setup');

		// The page: /gpu setup opens the link modal for its person, an admin; submit the emulator's key.
		const page = new URL(printed.page);
		const ui = (action: string, body: object) =>
			fetch(new URL(`/ui/${action}`, page), {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
		const state = async () => (await (await fetch(new URL('/ui/state', page))).json()) as PageState;
		expect((await ui('command', { text: '/gpu setup' })).status).toBe(200);
		const view = await eventually(
			'the link modal',
			async () => {
				const open = (await state()).view;
				return open?.view.callback_id === LINK_VIEW && open;
			},
			{
				timeoutMs: 15_000,
				intervalMs: 100,
			},
		);
		const value = (text: string | null) => ({ value: { type: 'plain_text_input', value: text } });
		expect(
			(
				await ui('view-submit', {
					viewId: view.id,
					values: {
						organization: value(printed.organization),
						api_key: value(printed.apiKey),
						project: value(null),
					},
				})
			).status,
		).toBe(200);
		// Linked: the form is closed or replaced by the app's confirmation.
		await eventually(
			'the link form to go',
			async () => (await state()).view?.view.callback_id !== LINK_VIEW,
			{ timeoutMs: 15_000, intervalMs: 100 },
		);

		expect((await ui('command', { text: '/gpu job echo {"text":"hello"}' })).status).toBe(200);
		await eventually(
			'the job to succeed in the channel',
			async () =>
				(await state()).messages.some(
					(message) => message.bot && /Succeeded/.test(JSON.stringify(message)),
				),
			{ timeoutMs: 30_000, intervalMs: 200 },
		);
		expect(output).not.toMatch(/xoxb-local-installed-/);
	} finally {
		await kill(child, 'SIGTERM');
	}
});
