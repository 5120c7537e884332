import { ManagementClient, type ManagementClientOptions } from '../client';
import { rateLimitKeyFor } from '../rate-limiter';
import { LIMITS } from '../schemas';
import { WorkloadClient, type WorkloadClientOptions } from '../workload-client';
import { systemClock } from './system-clock';
import { UndiciTransport } from './undici-transport';

export { systemClock } from './system-clock';
export { UndiciTransport } from './undici-transport';

let defaultTransport: UndiciTransport | undefined;

/** One keep-alive pool per process unless a caller brings its own. */
export function sharedTransport(): UndiciTransport {
	defaultTransport ??= new UndiciTransport();
	return defaultTransport;
}

type Defaulted<T> = Omit<T, 'transport' | 'clock'> &
	Partial<Pick<ManagementClientOptions, 'transport' | 'clock'>>;

export function createManagementClient(
	options: Defaulted<ManagementClientOptions> & { apiKey: string; requestsPerMinute?: number },
): ManagementClient {
	const { requestsPerMinute, ...rest } = options;
	return new ManagementClient({
		...rest,
		transport: options.transport ?? sharedTransport(),
		clock: options.clock ?? systemClock,
		rateLimit: options.rateLimit ?? {
			requestsPerMinute: requestsPerMinute ?? LIMITS.rateLimitPerMinute,
			key: rateLimitKeyFor(options.apiKey, options.baseUrl),
		},
	});
}

export function createWorkloadClient(options: Defaulted<WorkloadClientOptions>): WorkloadClient {
	return new WorkloadClient({
		...options,
		transport: options.transport ?? sharedTransport(),
		clock: options.clock ?? systemClock,
	});
}
