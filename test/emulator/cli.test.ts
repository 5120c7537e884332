import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { DEV_API_KEY, devWebhookSecretFor, startEmulator } from '../../emulator';
import { banner, optionsOf, readFlags, UsageError, USAGE } from '../../emulator/cli-flags';
import { call } from './helpers';

const BIN = join(__dirname, '../../emulator/bin/gpu-cloud-emulator.js');

function run(args: string[]): ChildProcessByStdio<null, Readable, Readable> {
	return spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
}

async function output(
	child: ChildProcessByStdio<null, Readable, Readable>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
	let stdout = '';
	let stderr = '';
	child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
	child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
	const [code] = (await once(child, 'exit')) as [number | null];
	return { code, stdout, stderr };
}

describe('gpu-cloud-emulator command', () => {
	it('starts, prints one line per URL and the dev credentials, serves them, and stops on SIGTERM', async () => {
		const child = run(['--port', '0', '--job-duration-ms', '100', '--quiet']);
		const done = output(child);
		let printed = '';
		await new Promise<void>((resolve, reject) => {
			child.stdout.on('data', (chunk: Buffer) => {
				printed += chunk.toString();
				if (printed.includes('Press Ctrl+C')) resolve();
			});
			child.once('exit', () => reject(new Error(`exited early: ${printed}`)));
		});
		const url = (label: string) =>
			new RegExp(`${label}:\\s+(http://127\\.0\\.0\\.1:\\d+\\S*)`).exec(printed)?.[1] ?? '';
		const [management, image, chat] = [
			url('Management API'),
			url('Image workload'),
			url('Chat workload'),
		];
		expect(management).toMatch(/\/api\/public$/);
		expect(image).toMatch(/\/workloads\/image$/);
		expect(chat).toMatch(/\/workloads\/chat$/);
		expect(printed).toContain(`API key: ${DEV_API_KEY}`);
		expect(printed).toContain('Organization: acme');
		expect(printed).toContain('Project: default');
		expect(
			(await call(`${management}/organizations/acme/inference-endpoints`, 'GET', DEV_API_KEY))
				.status,
		).toBe(200);
		expect((await call(`${image}/health`, 'GET', null)).status).toBe(200);
		expect((await call(`${chat}/health`, 'GET', null)).status).toBe(200);
		child.kill('SIGTERM');
		expect((await done).code).toBe(0);
	});

	it('exits with code 2 and a clear message on a bad flag', async () => {
		const { code, stderr } = await output(run(['--port', 'abc']));
		expect(code).toBe(2);
		expect(stderr).toBe(
			'gpu-cloud-emulator: --port must be a whole number from 0 to 65535\nRun with --help to see the options.\n',
		);
	});
});

describe('command flags', () => {
	it.each([
		[['--port', 'abc'], '--port must be a whole number from 0 to 65535'],
		[['--port', '70000'], '--port must be a whole number from 0 to 65535'],
		[['--error-rate', '1.5'], '--error-rate must be a number from 0 to 1'],
		[['--latency-ms=-5'], '--latency-ms must be a whole number'],
		[['--latency-ms', '-5'], "Option '--latency-ms' argument is ambiguous"],
		[['--organization', 'Acme'], '--organization must be 2-63 lower-case letters'],
		[['--webhook-secret', 'not base64!'], '--webhook-secret must be base64'],
		[['--fault-surfaces', 'management,billing'], '--fault-surfaces must list'],
		[['--extra-organization', 'Bravo=key'], '--extra-organization must be <name>=<api key>'],
		[['--extra-organization', 'bravo'], '--extra-organization must be <name>=<api key>'],
		[['--no-such-flag'], "Unknown option '--no-such-flag'"],
		[['--port'], "Option '--port <value>' argument missing"],
	])('refuses %j naming the flag and the rule', (args, message) => {
		expect(() => readFlags(args)).toThrow(UsageError);
		expect(() => readFlags(args)).toThrow(message);
	});

	it('maps flags onto emulator options', () => {
		const options = optionsOf(
			readFlags([
				'--port',
				'0',
				'--rate-limit',
				'0',
				'--workload-auth',
				'--chat-cold-start-ms',
				'20000',
				'--error-rate',
				'0.25',
				'--fault-surfaces',
				'management,chat',
				'--seed',
				'9',
				'--quiet',
			]),
		);
		expect(options).toEqual(
			expect.objectContaining({
				port: 0,
				rateLimitPerMinute: 0,
				workloadAuth: true,
				chatColdStartMs: 20_000,
				faults: expect.objectContaining({
					errorRate: 0.25,
					surfaces: ['management', 'chat'],
					seed: 9,
				}),
				log: undefined,
			}),
		);
		expect(readFlags([]).port).toBe(4010);
	});

	it('maps repeated --extra-organization flags onto further organizations, printing their secrets but never their keys', async () => {
		const options = optionsOf(
			readFlags([
				'--port',
				'0',
				'--extra-organization',
				'bravo=bravo-private-key',
				'--extra-organization',
				'charlie=c=key',
			]),
		);
		expect(options.organizations).toEqual([
			{ name: 'bravo', apiKey: 'bravo-private-key' },
			{ name: 'charlie', apiKey: 'c=key' },
		]);
		const emulator = await startEmulator({ ...options, log: undefined });
		try {
			const text = banner(emulator);
			expect(text).not.toContain('bravo-private-key');
			expect(text).toContain(
				`Further organization: bravo   API key: (the one given)   Webhook secret: ${devWebhookSecretFor('bravo')}`,
			);
			expect(text).toMatch(/^Organization: acme {3}Project: default$/m);
		} finally {
			await emulator.close();
		}
	});

	it('lists every option in the usage text', () => {
		for (const flag of [
			'--port',
			'--host',
			'--api-key',
			'--organization',
			'--project',
			'--webhook-secret',
			'--extra-organization',
			'--job-duration-ms',
			'--rate-limit',
			'--workload-auth',
			'--error-rate',
			'--rate-limit-fault-rate',
			'--latency-ms',
			'--reset-rate',
			'--malformed-rate',
			'--html-error-rate',
			'--webhook-failure-rate',
			'--interruption-rate',
			'--seed',
		]) {
			expect(USAGE).toContain(flag);
		}
	});

	it('prints the development key but never a key or secret given on the command line', async () => {
		const emulator = await startEmulator({
			port: 0,
			apiKey: 'my-private-key-42',
			webhookSecret: Buffer.from('private secret').toString('base64'),
			faults: { errorRate: 0.1 },
		});
		try {
			const text = banner(emulator);
			expect(text).not.toContain('my-private-key-42');
			expect(text).not.toContain(emulator.webhookSecret);
			expect(text).toContain('errorRate=0.1 on management');
		} finally {
			await emulator.close();
		}
	});
});

describe('startEmulator options', () => {
	it('refuses nonsense with a message naming the option and the rule', async () => {
		await expect(startEmulator({ organization: 'A' })).rejects.toThrow(/organization .*lower-case/);
		await expect(startEmulator({ webhookSecret: 'not base64!' })).rejects.toThrow(
			/webhookSecret must be base64/,
		);
		await expect(startEmulator({ faults: { errorRate: 2 } })).rejects.toThrow(
			/faults.errorRate must be 0-1/,
		);
		await expect(
			startEmulator({ inputSchemas: { 'no-such-endpoint': '{"type": "object"}' } }),
		).rejects.toThrow(/inputSchemas\W.*no-such-endpoint\W.*is not an endpoint of the emulator/);
	});
});
