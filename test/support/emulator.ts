import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../emulator';
import type { Clock } from '../../shared/clock';
import { ManagementClient, type ManagementClientOptions } from '../../shared/client';
import { UndiciTransport } from '../../shared/runtime/undici-transport';
import type { Transport } from '../../shared/transport';

/**
 * A fresh emulator for every test of the enclosing describe block (its faults and jobs start clean),
 * and one client transport for them all. `options` may be a function, to give each test a new clock.
 */
export function useEmulator(options: EmulatorOptions | (() => EmulatorOptions) = {}): {
	readonly emulator: RunningEmulator;
	transport: UndiciTransport;
} {
	const transport = new UndiciTransport();
	let emulator: RunningEmulator | undefined;
	beforeEach(async () => {
		emulator = await startEmulator({
			rateLimitPerMinute: 0,
			...(typeof options === 'function' ? options() : options),
		});
	});
	afterEach(() => emulator?.close());
	afterAll(() => transport.close());
	return {
		get emulator() {
			if (!emulator) throw new Error('The emulator starts before each test.');
			return emulator;
		},
		transport,
	};
}

/** A management client of the emulator's first organization, without rate limit or jitter. */
export function emulatorClient(
	emulator: RunningEmulator,
	transport: Transport,
	clock: Clock,
	options: Partial<ManagementClientOptions> = {},
): ManagementClient {
	return new ManagementClient({
		baseUrl: emulator.baseUrl,
		organization: emulator.organization,
		apiKey: emulator.apiKey,
		transport,
		clock,
		rateLimit: false,
		random: () => 0.5,
		...options,
	});
}
