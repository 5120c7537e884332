import { parseArgs } from 'node:util';
import { z } from 'zod/v4';
import {
	DEV_API_KEY,
	DEV_WEBHOOK_SECRET,
	FAULT_SURFACES,
	REQUEST_FAULT_KINDS,
	type EmulatorOptions,
	type FaultOptions,
	type RunningEmulator,
} from './index';

/** Flags of the `gpu-cloud-emulator` command, checked with the same care as API input. */
export const USAGE = `Usage: gpu-cloud-emulator [options]

A local emulator of GPU Cloud: management API, image and chat workloads, signed webhooks, faults.

Options:
  --port <n>                   Port to listen on (default 4010; 0 picks a free one)
  --host <host>                Address to bind (default 127.0.0.1)
  --api-key <key>              Accepted Service-Api-Key (default ${DEV_API_KEY})
  --organization <name>        Organization the key belongs to (default acme)
  --project <name>             Project that exists (default default)
  --webhook-secret <base64>    Organization webhook secret (default: a fixed development secret)
  --extra-organization <name>=<key>
                               A further organization with its own API key, jobs, queues and webhook
                               secret (base64 of "emulator-webhook-secret-<name>"); repeatable
  --job-duration-ms <n>        Time from create to completion of a job (default 3000)
  --rate-limit <n>             Requests per minute per key on the management API (default 240; 0 = off)
  --workload-auth              Require Service-Api-Key on the workloads (gateway authentication on)
  --chat-cold-start-ms <n>     The text workload starts from zero: ready this long after its first request (default 0)
  --quiet                      Do not print job transitions and webhook deliveries
Faults (all off by default; rates are probabilities from 0 to 1):
  --error-rate <p>             503 problem instead of the answer
  --rate-limit-fault-rate <p>  429 problem with Retry-After
  --retry-after <s>            Retry-After of that 429 in seconds (default 1)
  --latency-ms <n>             Added to every request
  --reset-rate <p>             Connection reset after the request was processed
  --malformed-rate <p>         Truncated JSON body with the success status
  --stall-rate <p>             Half the reply, then silence, after the request was processed
  --html-error-rate <p>        502 with an HTML page from the edge
  --gateway-timeout-rate <p>   504 with an HTML page from the edge
  --drop-rate <p>              Connection closed before any reply
  --hang-rate <p>              No reply at all
  --late-arrival-ms <n>        Requests hit by the four edge faults above reach the service n ms
                               later and are processed (default: never)
  --webhook-failure-rate <p>   A webhook delivery attempt fails and is retried
  --interruption-rate <p>      A running job drops back to pending and restarts
  --stream-error-rate <p>      A chat stream ends with an error event (needs chat in --fault-surfaces)
  --stream-cut-rate <p>        A chat stream stops part-way without [DONE] (needs chat too)
  --download-slow-rate <p>     A job's media download takes --download-slow-ms longer (default 5000)
  --download-slow-ms <n>       How much longer a slow download takes
  --download-cut-rate <p>      A job's media download breaks off half-way and the job fails
  --fault-sequence <list>      Faults for the next requests, one each, before the rates: e.g.
                               drop,none,error (kinds: ${REQUEST_FAULT_KINDS.join(',')},none)
  --fault-surfaces <list>      Where request faults apply: ${FAULT_SURFACES.join(',')} (default management)
  --seed <n>                   Seed of the fault sequence (default 1)
  --help                       Show this text`;

const integer = (name: string, min: number, max: number) =>
	z
		.string()
		.regex(/^\d+$/, {
			error: `--${name} must be a whole number from ${min} to ${max}`,
			abort: true,
		})
		.transform(Number)
		.pipe(
			z
				.number()
				.min(min, { error: `--${name} must be a whole number from ${min} to ${max}` })
				.max(max, { error: `--${name} must be a whole number from ${min} to ${max}` }),
		);

const probability = (name: string) =>
	z
		.string()
		.regex(/^\d*\.?\d+$/, { error: `--${name} must be a number from 0 to 1`, abort: true })
		.transform(Number)
		.pipe(
			z
				.number()
				.min(0)
				.max(1, { error: `--${name} must be a number from 0 to 1` }),
		);

const nameFlag = (name: string) =>
	z.string().regex(/^[a-z][a-z0-9-]{0,61}[a-z0-9]$/, {
		error: `--${name} must be 2-63 lower-case letters, digits or hyphens, starting with a letter and ending with a letter or digit`,
	});

const flagsSchema = z.object({
	port: integer('port', 0, 65535).default(4010),
	host: z.string().min(1, { error: '--host must not be empty' }).default('127.0.0.1'),
	'api-key': z.string().min(1, { error: '--api-key must not be empty' }).optional(),
	organization: nameFlag('organization').optional(),
	project: nameFlag('project').optional(),
	'webhook-secret': z
		.string()
		.regex(/^(whsec_)?[A-Za-z0-9+/]+={0,2}$/, {
			error: '--webhook-secret must be base64 (optionally prefixed "whsec_")',
		})
		.optional(),
	'extra-organization': z
		.array(
			z
				.string()
				.regex(/^[a-z][a-z0-9-]{0,61}[a-z0-9]=\S+$/, {
					error:
						'--extra-organization must be <name>=<api key>, the name 2-63 lower-case letters, digits or hyphens',
				})
				.transform((value) => {
					const at = value.indexOf('=');
					return { name: value.slice(0, at), apiKey: value.slice(at + 1) };
				}),
		)
		.optional(),
	'job-duration-ms': integer('job-duration-ms', 0, 86_400_000).optional(),
	'rate-limit': integer('rate-limit', 0, 1_000_000_000).optional(),
	'workload-auth': z.boolean().optional(),
	'chat-cold-start-ms': integer('chat-cold-start-ms', 0, 3_600_000).optional(),
	quiet: z.boolean().optional(),
	'error-rate': probability('error-rate').optional(),
	'rate-limit-fault-rate': probability('rate-limit-fault-rate').optional(),
	'latency-ms': integer('latency-ms', 0, 600_000).optional(),
	'reset-rate': probability('reset-rate').optional(),
	'malformed-rate': probability('malformed-rate').optional(),
	'html-error-rate': probability('html-error-rate').optional(),
	'webhook-failure-rate': probability('webhook-failure-rate').optional(),
	'interruption-rate': probability('interruption-rate').optional(),
	'stream-error-rate': probability('stream-error-rate').optional(),
	'retry-after': integer('retry-after', 0, 86_400).optional(),
	'stall-rate': probability('stall-rate').optional(),
	'gateway-timeout-rate': probability('gateway-timeout-rate').optional(),
	'drop-rate': probability('drop-rate').optional(),
	'hang-rate': probability('hang-rate').optional(),
	'late-arrival-ms': integer('late-arrival-ms', 0, 86_400_000).optional(),
	'stream-cut-rate': probability('stream-cut-rate').optional(),
	'download-slow-rate': probability('download-slow-rate').optional(),
	'download-slow-ms': integer('download-slow-ms', 0, 86_400_000).optional(),
	'download-cut-rate': probability('download-cut-rate').optional(),
	'fault-sequence': z
		.string()
		.transform((value) => value.split(',').map((part) => part.trim()))
		.pipe(
			z.array(
				z.enum([...REQUEST_FAULT_KINDS, 'none'], {
					error: `--fault-sequence must list ${[...REQUEST_FAULT_KINDS, 'none'].join(', ')} (comma-separated)`,
				}),
			),
		)
		.optional(),
	'fault-surfaces': z
		.string()
		.transform((value) => value.split(',').map((part) => part.trim()))
		.pipe(
			z.array(
				z.enum(FAULT_SURFACES, {
					error: `--fault-surfaces must list ${FAULT_SURFACES.join(', ')} (comma-separated)`,
				}),
			),
		)
		.optional(),
	seed: integer('seed', 0, 2 ** 32 - 1).optional(),
	help: z.boolean().optional(),
});
export type Flags = z.output<typeof flagsSchema>;

const STRING_FLAGS = Object.keys(flagsSchema.shape).filter(
	(name) => !['workload-auth', 'quiet', 'help', 'extra-organization'].includes(name),
);

export class UsageError extends Error {}

export function readFlags(argv: string[]): Flags {
	let values: Record<string, unknown>;
	try {
		const options = Object.fromEntries([
			...STRING_FLAGS.map((name) => [name, { type: 'string' as const }]),
			['extra-organization', { type: 'string' as const, multiple: true }],
			['workload-auth', { type: 'boolean' as const }],
			['quiet', { type: 'boolean' as const }],
			['help', { type: 'boolean' as const }],
		]);
		values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
	} catch (error) {
		// Node's own errors may come from another realm (test runners), so read the message structurally.
		const message =
			typeof error === 'object' && error !== null && 'message' in error
				? String(error.message)
				: String(error);
		throw new UsageError(message);
	}
	const parsed = flagsSchema.safeParse(values);
	if (!parsed.success)
		throw new UsageError(parsed.error.issues.map((issue) => issue.message).join('; '));
	return parsed.data;
}

export function optionsOf(flags: Flags): EmulatorOptions {
	const faults: FaultOptions = {
		seed: flags.seed,
		errorRate: flags['error-rate'],
		rateLimitRate: flags['rate-limit-fault-rate'],
		latencyMs: flags['latency-ms'],
		resetRate: flags['reset-rate'],
		malformedRate: flags['malformed-rate'],
		htmlErrorRate: flags['html-error-rate'],
		webhookFailureRate: flags['webhook-failure-rate'],
		interruptionRate: flags['interruption-rate'],
		streamErrorRate: flags['stream-error-rate'],
		retryAfterSeconds: flags['retry-after'],
		stallRate: flags['stall-rate'],
		gatewayTimeoutRate: flags['gateway-timeout-rate'],
		dropRate: flags['drop-rate'],
		hangRate: flags['hang-rate'],
		lateArrivalMs: flags['late-arrival-ms'],
		streamCutRate: flags['stream-cut-rate'],
		downloadSlowRate: flags['download-slow-rate'],
		downloadSlowMs: flags['download-slow-ms'],
		downloadCutRate: flags['download-cut-rate'],
		sequence: flags['fault-sequence'],
		surfaces: flags['fault-surfaces'],
	};
	// Unset flags stay undefined: startEmulator fills its defaults for them.
	return {
		port: flags.port,
		host: flags.host,
		apiKey: flags['api-key'],
		organization: flags.organization,
		project: flags.project,
		webhookSecret: flags['webhook-secret'],
		organizations: flags['extra-organization'],
		jobDurationMs: flags['job-duration-ms'],
		rateLimitPerMinute: flags['rate-limit'],
		workloadAuth: flags['workload-auth'],
		chatColdStartMs: flags['chat-cold-start-ms'],
		faults,
		log: flags.quiet ? undefined : (line) => console.log(`${new Date().toISOString()} ${line}`),
	};
}

/** What the command prints on start: one line per URL, the development credentials, the faults. */
export function banner(emulator: RunningEmulator): string {
	const {
		seed,
		retryAfterSeconds,
		lateArrivalMs,
		downloadSlowMs,
		sequence,
		surfaces,
		...switches
	} = emulator.faults;
	const on = Object.entries(switches)
		.filter(([, value]) => value > 0)
		.map(([name, value]) => `${name}=${String(value)}`);
	if (sequence.length > 0) on.push(`sequence=${sequence.join(',')}`);
	// The settings that shape a fault are worth printing only with a fault on.
	const faults =
		on.length === 0
			? on
			: [
					...on,
					...(retryAfterSeconds === 1 ? [] : [`retryAfterSeconds=${retryAfterSeconds}`]),
					...(lateArrivalMs === undefined ? [] : [`lateArrivalMs=${lateArrivalMs}`]),
					...(switches.downloadSlowRate > 0 ? [`downloadSlowMs=${downloadSlowMs}`] : []),
				];
	return [
		'GPU Cloud emulator is running.',
		`Management API:  ${emulator.baseUrl}`,
		`Image workload:  ${emulator.imageUrl}`,
		`Chat workload:   ${emulator.chatUrl}`,
		// Only the documented development values are printed; keys given on the command line stay private.
		`API key: ${emulator.apiKey === DEV_API_KEY ? DEV_API_KEY : '(the one given with --api-key)'}`,
		`Organization: ${emulator.organization}   Project: ${emulator.project}`,
		`Webhook secret: ${emulator.webhookSecret === DEV_WEBHOOK_SECRET ? DEV_WEBHOOK_SECRET : '(the one given with --webhook-secret)'}`,
		...emulator.organizations
			.slice(1)
			.map(
				(org) =>
					`Further organization: ${org.name}   API key: (the one given)   Webhook secret: ${org.webhookSecret}`,
			),
		`Faults: ${faults.length > 0 ? `${faults.join(' ')} on ${surfaces.join(', ')} (seed ${seed})` : 'none'}`,
		'Press Ctrl+C to stop.',
	].join('\n');
}
