import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { LocalService } from './local';

/**
 * The service emulator for `npm start` without GPU Cloud settings, in a process of its own: the app
 * reaches it over loopback HTTP exactly as it reaches the real service, and never loads its code.
 */

const EMULATOR_CLI = join(__dirname, '..', 'emulator', 'cli.ts');
const START_TIMEOUT_MS = 30_000;

export interface EmulatorProcess {
	service: LocalService;
	child: ChildProcess;
	close(): Promise<void>;
}

/** The values the emulator prints on start (its development credentials and its URLs). */
function readBanner(output: string): LocalService | undefined {
	const line = (label: string) => new RegExp(`^${label}:\\s*(\\S+)`, 'm').exec(output)?.[1];
	const organization = /^Organization: (\S+)\s+Project: (\S+)/m.exec(output);
	const baseUrl = line('Management API');
	const apiKey = line('API key');
	const webhookSecret = line('Webhook secret');
	if (!baseUrl || !apiKey || !webhookSecret || !organization) return undefined;
	return {
		baseUrl,
		imageUrl: line('Image workload'),
		chatUrl: line('Chat workload'),
		apiKey,
		webhookSecret,
		organization: organization[1],
		project: organization[2],
	};
}

export function startEmulatorProcess(): Promise<EmulatorProcess> {
	// One process (tsx as a loader, not its CLI, which would fork): stopping it stops the emulator.
	const child = spawn(
		process.execPath,
		['--import', 'tsx', EMULATOR_CLI, '--port', '0', '--host', '127.0.0.1', '--quiet'],
		{ stdio: ['ignore', 'pipe', 'pipe'] },
	);
	let output = '';
	const close = () =>
		new Promise<void>((resolve) => {
			if (child.exitCode !== null || child.signalCode !== null) return resolve();
			child.once('exit', () => resolve());
			child.kill('SIGTERM');
		});
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => {
			void close();
			reject(
				new Error(`The emulator did not start within ${START_TIMEOUT_MS / 1000} s:\n${output}`),
			);
		}, START_TIMEOUT_MS);
		const onOutput = (chunk: Buffer) => {
			output += chunk.toString();
			const service = readBanner(output);
			if (!service) return;
			clearTimeout(timer);
			child.stdout?.off('data', onOutput);
			// Keep draining its output so a chatty emulator never blocks on a full pipe.
			child.stdout?.resume();
			resolve({ service, child, close });
		};
		child.stdout?.on('data', onOutput);
		child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
		child.once('exit', (code) => {
			clearTimeout(timer);
			reject(new Error(`The emulator exited with ${code}:\n${output}`));
		});
	});
}
