import type { ChildProcess } from 'node:child_process';
import { freePort } from '../../slack-app/local';
import { kill, startAppProcess, type AppProcess } from '../reliability/slack-process';
import { content, Stack } from '../slack/harness';
import { eventually } from '../support/eventually';
import { inflightKinds, inflightKindsOnceWritten } from '../support/state-file';

/**
 * SIGTERM, as systemd, Docker or Kubernetes send it: the app stops taking requests (/readyz 503, a
 * new command refused), lets work it acknowledged reach a safe point, exits 0, and loses nothing:
 * a job still running on the service is delivered by the next start, once.
 */

const CHANNEL = 'C0SIGTERM';

function exited(child: ChildProcess): Promise<number | null> {
	return new Promise((resolve) =>
		child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
	);
}

/** Starts the app, runs a transcription job and an image generation, and sends SIGTERM while both are under way. */
async function terminateMidWork(stack: Stack, port: number, env: Record<string, string>) {
	const first = await startAppProcess(stack, port, { SLACK_POLL_INTERVAL_MS: '200', ...env });
	stack.standin.setAppUrl(`http://127.0.0.1:${port}/slack/events`);
	expect(
		(await stack.command('transcribe https://files.example/term.mp3', 'U0TERM1', CHANNEL)).status,
	).toBe(200);
	const job = await stack.standin.waitFor(
		() => stack.parents(CHANNEL).find((parent) => /Job `/.test(content(parent))),
		15_000,
		'the running job',
	);
	stack.emulator.setFaults({ latencyMs: 3000, surfaces: ['image'] });
	expect((await stack.command('image a lighthouse at dusk', 'U0TERM2', CHANNEL)).status).toBe(200);
	await eventually(
		'the image under way',
		async () =>
			(await inflightKindsOnceWritten(stack.stateFile)).includes('image') ? true : undefined,
		{ timeoutMs: 15_000, intervalMs: 50 },
	);
	const image = stack.parents(CHANNEL)[1];
	first.child.kill('SIGTERM');
	return { first, job, image };
}

async function restart(stack: Stack, port: number): Promise<AppProcess> {
	stack.emulator.setFaults({ latencyMs: 0 });
	return startAppProcess(stack, port, { SLACK_POLL_INTERVAL_MS: '200' });
}

it('SIGTERM: readyz 503 and new requests refused, the acknowledged image finishes, exit 0; the next start posts the running job once', async () => {
	const stack = await Stack.start({ app: false, emulator: { jobDurationMs: 12_000 } });
	const port = await freePort();
	let child: ChildProcess | undefined;
	try {
		const { first, job, image } = await terminateMidWork(stack, port, {});
		child = first.child;
		const base = `http://127.0.0.1:${port}`;
		const readiness = await eventually(
			'readyz to turn 503',
			async () => {
				const reply = await fetch(`${base}/readyz`);
				return reply.status === 503 ? reply.json() : undefined;
			},
			{ timeoutMs: 3000, intervalMs: 50 },
		);
		expect(readiness).toEqual({ status: 'draining' });
		expect((await fetch(`${base}/healthz`)).status).toBe(200);
		expect((await stack.command('help', 'U0TERM3', CHANNEL)).status).toBe(503);
		expect(await exited(first.child)).toBe(0);

		// The image was acknowledged before SIGTERM: it reached its thread before the process exited.
		expect(stack.replies(image.ts, CHANNEL).flatMap((message) => message.fileIds)).toHaveLength(1);
		expect(await inflightKinds(stack.stateFile)).toEqual([]);
		expect(first.output()).toMatch(/SIGTERM received: refusing new requests/);
		expect(first.output()).toContain('"msg":"Stopped."');
		// The job was still running on the service: nothing posted yet, nothing lost.
		expect(stack.replies(job.ts, CHANNEL)).toHaveLength(0);

		const second = await restart(stack, port);
		child = second.child;
		await stack.waitForParentText(job.ts, /Succeeded in/, 30_000, CHANNEL);
		await stack.standin.waitFor(
			() => stack.replies(job.ts, CHANNEL).length > 0,
			10_000,
			'the result',
		);
		second.child.kill('SIGTERM');
		expect(await exited(second.child)).toBe(0);
		expect(stack.replies(job.ts, CHANNEL)).toHaveLength(1);
		expect(stack.replies(image.ts, CHANNEL)).toHaveLength(1);
		for (const secret of stack.secrets())
			expect(first.output() + second.output()).not.toContain(secret);
	} finally {
		if (child) await kill(child);
		await stack.close();
	}
}, 120_000);

it('SIGTERM with a short shutdown timeout: exits 0 with the image unfinished, and the next start redoes it once', async () => {
	const stack = await Stack.start({ app: false, emulator: { jobDurationMs: 2000 } });
	const port = await freePort();
	let child: ChildProcess | undefined;
	try {
		const { first, job, image } = await terminateMidWork(stack, port, {
			SLACK_SHUTDOWN_TIMEOUT_SECONDS: '0',
		});
		child = first.child;
		expect(await exited(first.child)).toBe(0);
		expect(first.output()).toContain('the next start resumes it');
		expect(await inflightKinds(stack.stateFile)).toEqual(['image']);

		const second = await restart(stack, port);
		child = second.child;
		await stack.waitForParentText(image.ts, /Succeeded in/, 30_000, CHANNEL);
		await stack.waitForParentText(job.ts, /Succeeded in/, 30_000, CHANNEL);
		await stack.standin.waitFor(
			() => stack.replies(job.ts, CHANNEL).length > 0,
			10_000,
			'the job result',
		);
		await eventually(
			'the image to be recorded as done',
			async () => ((await inflightKinds(stack.stateFile)).length === 0 ? true : undefined),
			{ timeoutMs: 10_000, intervalMs: 50 },
		);
		expect(stack.replies(image.ts, CHANNEL).flatMap((message) => message.fileIds)).toHaveLength(1);
		expect(stack.replies(job.ts, CHANNEL)).toHaveLength(1);
	} finally {
		if (child) await kill(child);
		await stack.close();
	}
}, 120_000);
