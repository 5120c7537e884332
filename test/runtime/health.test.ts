import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Health, type ReadinessProbe } from '../../slack-app/http/health';
import { JsonLogger } from '../../slack-app/slack/log';
import { Stack } from '../slack/harness';

/** /healthz and /readyz over real HTTP, with probes whose answers the test decides. */

async function serve(
	health: Health,
): Promise<{ server: Server; get: (path: string) => Promise<{ status: number; body: unknown }> }> {
	const server = createServer((req, res) =>
		req.url === '/readyz' ? health.readyz(req, res) : health.healthz(req, res),
	);
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return {
		server,
		get: async (path) => {
			const reply = await fetch(`${base}${path}`);
			return { status: reply.status, body: await reply.json() };
		},
	};
}

function logs() {
	const lines: string[] = [];
	return { lines, logger: new JsonLogger({ write: (line) => lines.push(line) }) };
}

it('is ready when every probe passes, names the failing one otherwise, and logs each change once', async () => {
	let serviceUp = false;
	let calls = 0;
	const probes: ReadinessProbe[] = [
		{ name: 'slack', check: async () => undefined },
		{
			name: 'service',
			check: async () => {
				calls++;
				if (!serviceUp) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
			},
		},
	];
	const { lines, logger } = logs();
	const health = new Health({ probes, logger, cacheMs: 0 });
	const { server, get } = await serve(health);
	try {
		expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
		expect(await get('/readyz')).toEqual({
			status: 503,
			body: { status: 'not ready', checks: { slack: 'ok', service: 'failing' } },
		});
		expect(await get('/readyz')).toMatchObject({ status: 503 });
		serviceUp = true;
		expect(await get('/readyz')).toEqual({
			status: 200,
			body: { status: 'ready', checks: { slack: 'ok', service: 'ok' } },
		});
		expect(calls).toBe(3);
		// The reason goes to the log (once per change), never into the public answer.
		expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
			'Readiness: service check failed: Error: connect ECONNREFUSED 127.0.0.1:1',
			'Readiness: service is reachable again.',
		]);
		health.startDraining();
		expect(await get('/readyz')).toEqual({ status: 503, body: { status: 'draining' } });
		expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
	} finally {
		server.close();
	}
});

it('gives a probe that hangs up after its timeout, and asks each dependency at most once per cache period', async () => {
	let calls = 0;
	const probes: ReadinessProbe[] = [
		{
			name: 'service',
			// Never answers: only the health check's own timeout can end it.
			check: (signal) => {
				calls++;
				return new Promise((_, reject) =>
					signal.addEventListener('abort', () => reject(new Error('aborted'))),
				);
			},
		},
	];
	const health = new Health({ probes, logger: logs().logger, timeoutMs: 200, cacheMs: 60_000 });
	const { server, get } = await serve(health);
	try {
		// The probe never answers, so these replies come from its timeout (no stopwatch needed).
		const answers = await Promise.all([get('/readyz'), get('/readyz'), get('/readyz')]);
		expect(answers.map((answer) => answer.status)).toEqual([503, 503, 503]);
		expect(await get('/readyz')).toEqual({
			status: 503,
			body: { status: 'not ready', checks: { service: 'failing' } },
		});
		expect(calls).toBe(1);
	} finally {
		server.close();
	}
});

it('the app serves both routes on its Slack port, and once draining refuses Slack requests and webhooks but still answers health', async () => {
	const stack = await Stack.start({ webhooks: true });
	try {
		const events = stack.app.eventsUrl ?? '';
		const webhook = stack.app.localWebhookUrl ?? '';
		expect(await (await fetch(new URL('/readyz', events))).json()).toEqual({
			status: 'ready',
			checks: { slack: 'ok', service: 'ok' },
		});
		expect((await stack.command('help')).status).toBe(200);

		stack.app.refuseNewRequests();
		expect((await stack.command('help')).status).toBe(503);
		const delivery = await fetch(webhook, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: '{}',
		});
		expect([delivery.status, delivery.headers.get('connection')]).toEqual([503, 'close']);
		const readiness = await fetch(new URL('/readyz', events));
		expect([readiness.status, await readiness.json()]).toEqual([503, { status: 'draining' }]);
		expect((await fetch(new URL('/healthz', events))).status).toBe(200);
		expect((await fetch(new URL('/nothing-here', events))).status).toBe(404);
	} finally {
		await stack.close();
	}
});
