import { z } from 'zod/v4';
import type { Clock } from '../shared/clock';
import { LIMITS, inferenceEndpointSchema, resourceNameSchema } from '../shared/schemas';
import { ENDPOINT_NAMES } from './endpoints/catalogue';
import { decodeWebhookSecret } from '../shared/webhooks';
import { systemClock } from '../shared/runtime/system-clock';

/** The documented development credentials; never use them outside the emulator. */
export const DEV_API_KEY = 'dev-api-key-0000';
/** base64 of "emulator-webhook-secret-00000000" (32 bytes). */
export const DEV_WEBHOOK_SECRET = 'ZW11bGF0b3Itd2ViaG9vay1zZWNyZXQtMDAwMDAwMDA=';

export const FAULT_SURFACES = ['management', 'image', 'chat'] as const;
export type FaultSurface = (typeof FAULT_SURFACES)[number];

/** The faults that hit one request (not a delivery or a job), so a sequence may name them. */
export const REQUEST_FAULT_KINDS = [
	'error',
	'rate-limit',
	'html-error',
	'gateway-timeout',
	'drop',
	'hang',
	'reset',
	'malformed',
	'stall',
	'stream-error',
	'stream-cut',
] as const;
export type RequestFaultKind = (typeof REQUEST_FAULT_KINDS)[number];

const rate = z
	.number({ error: 'must be a number' })
	.min(0, { error: 'must be 0-1' })
	.max(1, { error: 'must be 0-1' });

/** Every fault is off by default; probabilities are per request (or per attempt / per run for webhooks and jobs). */
export const faultSettingsSchema = z.strictObject({
	/** Seed of the PRNG that decides which requests a fault hits. */
	seed: z
		.number()
		.int({ error: 'must be a whole number' })
		.min(0, { error: 'must be 0 or more' })
		.default(1),
	/** A 5xx problem instead of the real answer. */
	errorRate: rate.default(0),
	/** A 429 problem with `Retry-After`, independent of the real rate limit. */
	rateLimitRate: rate.default(0),
	/** The `Retry-After` of the injected 429, in seconds (the real service's vary). */
	retryAfterSeconds: z
		.number()
		.int({ error: 'must be a whole number' })
		.min(0, { error: 'must be 0 or more' })
		.max(86_400, { error: 'must be at most 86400' })
		.default(1),
	/** Added to every request on the faulted surfaces. */
	latencyMs: z
		.number()
		.int({ error: 'must be a whole number' })
		.min(0, { error: 'must be 0 or more' })
		.default(0),
	/** The request is processed, then the socket is destroyed after the headers or part of the body. */
	resetRate: rate.default(0),
	/** The request is processed, then a truncated JSON body is sent with the success status. */
	malformedRate: rate.default(0),
	/** A 502 with an HTML page, as an edge proxy sends. */
	htmlErrorRate: rate.default(0),
	/** A 504 with an HTML page: the edge gave up waiting for the service. */
	gatewayTimeoutRate: rate.default(0),
	/** The connection is closed before any reply. */
	dropRate: rate.default(0),
	/** No reply at all: the client's own timeout ends the request. */
	hangRate: rate.default(0),
	/**
	 * When requests hit by an edge fault (html-error, gateway-timeout, drop, hang) on the management
	 * API reach the service: unset, never; 0, before the fault is answered; n, n ms later.
	 */
	lateArrivalMs: z
		.number()
		.int({ error: 'must be a whole number' })
		.min(0, { error: 'must be 0 or more' })
		.optional(),
	/** The request is processed; the status line and half the body go out, then nothing more. */
	stallRate: rate.default(0),
	/** A webhook delivery attempt fails (recorded, not sent) and is retried. */
	webhookFailureRate: rate.default(0),
	/** A running job drops back to pending once, then restarts. */
	interruptionRate: rate.default(0),
	/** A chat stream ends with `data: {"error": ...}` part-way. */
	streamErrorRate: rate.default(0),
	/** A chat stream stops part-way and the response ends, with neither an error event nor `[DONE]`. */
	streamCutRate: rate.default(0),
	/** A job's media download takes `downloadSlowMs` longer (on the emulator's clock). */
	downloadSlowRate: rate.default(0),
	downloadSlowMs: z
		.number()
		.int({ error: 'must be a whole number' })
		.min(0, { error: 'must be 0 or more' })
		.default(5000),
	/** A job's media download breaks off half-way, as when the file's server drops the connection. */
	downloadCutRate: rate.default(0),
	/**
	 * Faults for the next requests on the faulted surfaces, one each in order (`none` leaves one
	 * alone), before any rate is consulted: a whole story, exactly, for a test or a demonstration.
	 */
	sequence: z
		.array(z.enum([...REQUEST_FAULT_KINDS, 'none'], { error: 'must name request faults or none' }))
		.default([]),
	/** Which HTTP surfaces the request faults hit. */
	surfaces: z.array(z.enum(FAULT_SURFACES)).default(['management']),
});
export type FaultSettings = z.output<typeof faultSettingsSchema>;
export type FaultOptions = z.input<typeof faultSettingsSchema>;

export type JobDuration = number | ((endpoint: string, input: unknown) => number);

/** A further organization of the emulated service: its own API key, webhook secret, jobs and queues. */
export interface OrganizationOptions {
	name: string;
	apiKey: string;
	/** base64, optionally prefixed `whsec_`. Default: a fixed development secret derived from the name. */
	webhookSecret?: string;
	/** Default `default`. */
	project?: string;
}

/** A fixed development webhook secret for a further organization: base64 of "emulator-webhook-secret-<name>". */
export function devWebhookSecretFor(organization: string): string {
	return Buffer.from(`emulator-webhook-secret-${organization}`).toString('base64');
}

export interface OrganizationConfig {
	name: string;
	apiKey: string;
	webhookSecret: string;
	project: string;
}

export interface EmulatorOptions {
	/** 0 (default) picks a free port. */
	port?: number;
	host?: string;
	apiKey?: string;
	organization?: string;
	project?: string;
	/** base64, optionally prefixed `whsec_`. */
	webhookSecret?: string;
	/**
	 * Further organizations besides the first (`organization`, `apiKey`, `webhookSecret`, `project`).
	 * Each key is answered only for its own organization; jobs, queues and webhook signatures are its own.
	 */
	organizations?: readonly OrganizationOptions[];
	/** Total time from create to completion (a quarter pending, the rest running). Default 3000. */
	jobDurationMs?: JobDuration;
	/** Requests per minute per API key on the management API (sliding 60 s window); 0 or false turns it off. */
	rateLimitPerMinute?: number | false;
	/** Require `Service-Api-Key` on the workloads, as when the gateway's `networking.auth` is on. */
	workloadAuth?: boolean;
	/**
	 * The text workload starts scaled to zero: its first request starts a replica, which is ready this
	 * many ms later; until then `/health` and completions answer 503. Default 0 (always ready).
	 */
	chatColdStartMs?: number;
	/** Pauses between webhook delivery attempts; attempts = pauses + 1. Default [500, 1000, 2000]. */
	webhookRetryDelaysMs?: readonly number[];
	/**
	 * The `input_schema` the catalogue publishes for an endpoint, by endpoint name, in place of the one
	 * derived from its input rules (its jobs still check input by those rules): real endpoints publish
	 * schemas of every shape, and a client must cope with them.
	 */
	inputSchemas?: Readonly<Record<string, string>>;
	/**
	 * Further endpoints the catalogue lists after its own (their `organization_name` is the
	 * organization's): a catalogue of hundreds of endpoints, as a large organization has, for clients
	 * that must cope with one. They are listed and read like the others; jobs on them are refused as
	 * jobs on an unknown endpoint.
	 */
	listedEndpoints?: readonly ListedEndpoint[];
	/**
	 * Where jobs download media from instead, by origin (`{"https://files.example":
	 * "http://127.0.0.1:5000"}`), as curl's `--resolve` does: a test keeps a made-up file host and
	 * serves its files on loopback. Errors still name the URL's own host.
	 */
	mediaHosts?: Readonly<Record<string, string>>;
	clock?: Clock;
	faults?: FaultOptions;
	/** Receives one line per notable event (job transitions, deliveries); never per plain request. */
	log?: (line: string) => void;
}

/** A catalogue item without its organization, which the emulator fills in. */
const listedEndpointSchema = inferenceEndpointSchema.omit({ organization_name: true });
export type ListedEndpoint = z.infer<typeof listedEndpointSchema>;

const durationSchema = z.union([
	z
		.number({ error: 'must be a number of milliseconds' })
		.int()
		.min(0, { error: 'must be 0 or more' }),
	z.custom<(endpoint: string, input: unknown) => number>((value) => typeof value === 'function', {
		error: 'must be a number or a function',
	}),
]);

const webhookSecretSchema = z.string().refine(
	(secret) => {
		try {
			return decodeWebhookSecret(secret).length > 0;
		} catch {
			return false;
		}
	},
	{ error: 'must be base64 (optionally prefixed "whsec_")' },
);

const organizationSchema = z.strictObject({
	name: resourceNameSchema,
	apiKey: z.string().min(1, { error: 'must not be empty' }),
	webhookSecret: webhookSecretSchema.optional(),
	project: resourceNameSchema.default('default'),
});

const optionsSchema = z.strictObject({
	port: z.number().int().min(0).max(65535, { error: 'must be 0-65535' }).default(0),
	host: z.string().min(1).default('127.0.0.1'),
	apiKey: z.string().min(1, { error: 'must not be empty' }).default(DEV_API_KEY),
	organization: resourceNameSchema.default('acme'),
	project: resourceNameSchema.default('default'),
	webhookSecret: webhookSecretSchema.default(DEV_WEBHOOK_SECRET),
	organizations: z
		.array(organizationSchema)
		.max(100, { error: 'must have at most 100 entries' })
		.default([]),
	jobDurationMs: durationSchema.default(3000),
	rateLimitPerMinute: z
		.union([z.literal(false), z.number().int().min(0, { error: 'must be 0 or more' })])
		.default(LIMITS.rateLimitPerMinute),
	workloadAuth: z.boolean().default(false),
	chatColdStartMs: z
		.number()
		.int({ error: 'must be a whole number of milliseconds' })
		.min(0, { error: 'must be 0 or more' })
		.default(0),
	webhookRetryDelaysMs: z
		.array(z.number().int().min(0))
		.max(10, { error: 'must have at most 10 pauses' })
		.default([500, 1000, 2000]),
	mediaHosts: z
		.record(
			z.url({ error: 'must map origins such as https://files.example' }),
			z.url({ error: 'must map to an origin such as http://127.0.0.1:5000' }),
		)
		.default({}),
	inputSchemas: z
		.record(resourceNameSchema, z.string().min(1, { error: 'must not be empty' }))
		.superRefine((schemas, context) => {
			for (const name of Object.keys(schemas))
				if (!ENDPOINT_NAMES.has(name))
					context.addIssue({
						code: 'custom',
						path: [name],
						message: 'is not an endpoint of the emulator',
					});
		})
		.default({}),
	listedEndpoints: z
		.array(listedEndpointSchema)
		.superRefine((listed, context) => {
			const seen = new Set<string>(ENDPOINT_NAMES);
			for (const [index, endpoint] of listed.entries()) {
				if (seen.has(endpoint.name))
					context.addIssue({
						code: 'custom',
						path: [index, 'name'],
						message: `"${endpoint.name}" is listed already`,
					});
				seen.add(endpoint.name);
			}
		})
		.default([]),
	clock: z
		.custom<Clock>(
			(value) => typeof value === 'object' && value !== null && 'now' in value && 'sleep' in value,
		)
		.default(systemClock),
	faults: faultSettingsSchema.default(faultSettingsSchema.parse({})),
	log: z.custom<(line: string) => void>((value) => typeof value === 'function').optional(),
});

export interface ResolvedOptions {
	port: number;
	host: string;
	/** Every organization; the first is the one `apiKey`, `organization`, `project` and `webhookSecret` describe. */
	organizations: readonly [OrganizationConfig, ...OrganizationConfig[]];
	jobDurationMs: (endpoint: string, input: unknown) => number;
	/** 0 means off. */
	rateLimitPerMinute: number;
	workloadAuth: boolean;
	chatColdStartMs: number;
	webhookRetryDelaysMs: readonly number[];
	inputSchemas: Readonly<Record<string, string>>;
	listedEndpoints: readonly ListedEndpoint[];
	mediaHosts: Readonly<Record<string, string>>;
	clock: Clock;
	faults: FaultSettings;
	log: (line: string) => void;
}

/** Fills defaults and rejects nonsense with a message naming the option and its rule. */
export function resolveOptions(options: EmulatorOptions = {}): ResolvedOptions {
	const result = optionsSchema.safeParse(options);
	if (!result.success) {
		const issues = result.error.issues.map(
			(issue) => `${issue.path.join('.') || 'options'} ${issue.message}`,
		);
		throw new TypeError(`Invalid emulator options: ${issues.join('; ')}`);
	}
	const {
		apiKey,
		organization,
		project,
		webhookSecret,
		organizations: further,
		...parsed
	} = result.data;
	const duration = parsed.jobDurationMs;
	const organizations: ResolvedOptions['organizations'] = [
		{ name: organization, apiKey, webhookSecret, project },
		...further.map((org) => ({
			...org,
			webhookSecret: org.webhookSecret ?? devWebhookSecretFor(org.name),
		})),
	];
	const names = new Set<string>();
	const keys = new Set<string>();
	for (const org of organizations) {
		if (names.has(org.name))
			throw new TypeError(
				`Invalid emulator options: organizations has "${org.name}" more than once`,
			);
		if (keys.has(org.apiKey))
			throw new TypeError(
				`Invalid emulator options: organizations: the API key of "${org.name}" belongs to another organization too`,
			);
		names.add(org.name);
		keys.add(org.apiKey);
	}
	return {
		...parsed,
		organizations,
		jobDurationMs: typeof duration === 'number' ? () => duration : duration,
		rateLimitPerMinute: parsed.rateLimitPerMinute === false ? 0 : parsed.rateLimitPerMinute,
		log: parsed.log ?? (() => undefined),
	};
}
