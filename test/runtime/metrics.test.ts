import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CHANNEL, Stack, USER } from '../slack/harness';
import { TEAM } from '../../slack-standin/workspace';
import { eventually } from '../support/eventually';

/**
 * GET /metrics (Prometheus' text format) on the app's port, fed at its seams: a /gpu command and
 * its ack time per command and workspace, the job's phases, Slack Web API calls and Slack's errors
 * by method, GPU Cloud's 429s, and the availability of each dependency the readiness probes check.
 */

jest.setTimeout(60_000);

/** The value of one sample line (`name{labels} value`), labels given in the order prom-client writes them. */
function sample(text: string, name: string, labels: string): number | undefined {
	const line = text.split('\n').find((row) => row.startsWith(`${name}{${labels}} `));
	return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

it('counts commands and their ack time, job phases, Slack calls and errors, the service 429s and dependency availability', async () => {
	const stack = await Stack.start({ webhooks: true });
	try {
		const team = TEAM.id;
		// Slack refuses the first parent post once: the client waits Retry-After and posts again.
		stack.standin.api.rateLimit('chat.postMessage', 1, 0);
		expect((await stack.command('job echo {"text":"hi"}', USER, CHANNEL)).status).toBe(200);
		const parent = await stack.waitForParent(1, CHANNEL, 20_000);
		await stack.waitForParentText(parent.ts, /Succeeded/, 40_000, CHANNEL);
		await stack.app.idle();
		// GPU Cloud answers 429 to every request for a moment: the status read waits and retries.
		stack.emulator.setFaults({ rateLimitRate: 1 });
		await stack.command('status 00000000-0000-4000-8000-000000000000');
		const scrape = async () => (await fetch(new URL('/metrics', stack.app.eventsUrl))).text();
		await eventually(
			'a 429 counted',
			async () =>
				(sample(
					await scrape(),
					'gpu_cloud_slack_service_rate_limited_total',
					`organization="${stack.emulator.organization}"`,
				) ?? 0) > 0,
			{ timeoutMs: 20_000, intervalMs: 100 },
		);
		stack.emulator.setFaults({ rateLimitRate: 0 });
		await stack.waitForEphemeral(/./, USER, 20_000);

		const reply = await fetch(new URL('/metrics', stack.app.eventsUrl));
		expect(reply.status).toBe(200);
		expect(reply.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
		const text = await reply.text();
		const prefix = 'gpu_cloud_slack_';
		expect(sample(text, `${prefix}requests_total`, `kind="/gpu",team="${team}"`)).toBe(2);
		expect(sample(text, `${prefix}ack_duration_seconds_count`, 'kind="/gpu"')).toBe(2);
		expect(sample(text, `${prefix}ack_duration_seconds_bucket`, 'le="3",kind="/gpu"')).toBe(2);
		expect(
			sample(
				text,
				`${prefix}job_phase_changes_total`,
				`phase="delivered",status="",team="${team}"`,
			),
		).toBe(1);
		expect(
			sample(
				text,
				`${prefix}job_phase_changes_total`,
				`phase="delivering",status="succeeded",team="${team}"`,
			),
		).toBe(1);
		expect(
			sample(text, `${prefix}slack_api_calls_total`, 'method="chat.postMessage"'),
		).toBeGreaterThanOrEqual(2);
		expect(
			sample(
				text,
				`${prefix}slack_api_errors_total`,
				'method="chat.postMessage",error="ratelimited"',
			),
		).toBe(1);
		expect(
			sample(
				text,
				`${prefix}service_rate_limited_total`,
				`organization="${stack.emulator.organization}"`,
			),
		).toBeGreaterThanOrEqual(1);
		// The probes ran while GPU Cloud refused everything: service 0 until they run again (5 s cache).
		expect(sample(text, `${prefix}dependency_up`, 'dependency="slack"')).toBe(1);
		await eventually(
			'service up again',
			async () => sample(await scrape(), `${prefix}dependency_up`, 'dependency="service"') === 1,
			{ timeoutMs: 15_000, intervalMs: 500 },
		);
		expect(text).toContain(`${prefix}process_resident_memory_bytes`);
		// Every series the shipped dashboard reads exists.
		const dashboard = await readFile(
			join(__dirname, '..', '..', 'docs', 'deploy', 'grafana-dashboard.json'),
			'utf8',
		);
		const read = new Set(dashboard.match(/gpu_cloud_slack_\w+/g));
		expect(read.size).toBeGreaterThanOrEqual(9);
		for (const name of read)
			expect([name, text.includes(`# TYPE ${name.replace(/_bucket$/, '')} `)]).toEqual([
				name,
				true,
			]);
		for (const secret of stack.secrets()) expect(text).not.toContain(secret);
	} finally {
		await stack.close();
	}
});

it('in Socket Mode counts each acknowledged envelope and its ack time, per command and workspace, as over HTTP', async () => {
	const stack = await Stack.start({ socketMode: {} });
	try {
		const team = TEAM.id;
		expect((await stack.command('help', USER, CHANNEL)).status).toBe(200);
		expect((await stack.standin.app.appHomeOpened(USER)).status).toBe(200);
		await stack.app.idle();
		const text = await (await fetch(`${stack.app.localUrl}/metrics`)).text();
		const prefix = 'gpu_cloud_slack_';
		expect({
			commands: sample(text, `${prefix}requests_total`, `kind="/gpu",team="${team}"`),
			events: sample(text, `${prefix}requests_total`, `kind="event_callback",team="${team}"`),
			acks: sample(text, `${prefix}ack_duration_seconds_count`, 'kind="/gpu"'),
			within3s: sample(text, `${prefix}ack_duration_seconds_bucket`, 'le="3",kind="/gpu"'),
		}).toEqual({ commands: 1, events: 1, acks: 1, within3s: 1 });
	} finally {
		await stack.close();
	}
});
