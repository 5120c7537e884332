/**
 * `npm run test:scale`: the package in n8n's queue mode (n8n 2.41.3 on Node 24, main + 2 workers
 * + 2 webhook processors behind a load balancer, PostgreSQL and Redis from Debian's packages) and
 * the three promises that used to break when n8n is scaled out, measured against their goals:
 *   - repeated trigger deliveries spread over processes: what follows the trigger runs once per job
 *     (executions started are measured and reported: see docs/reliability.md, item 7);
 *   - bulk creates from several workers sharing one key: >= 90 % of the limit, no failed item,
 *     429s under 2 % of requests (2 workers, then 3);
 *   - a multi-item webhook wait leaves GPU Cloud with no failed delivery;
 *   - an image generated on a worker is kept as binary data in the database and read back through
 *     n8n's REST API with its size and type;
 *   - the Poll Trigger, polling on the main instance, emits jobs that ended while the main was down
 *     once, and none twice across restarts (test/e2e/polling.ts, the executions on the workers).
 * Prints the figures and exits non-zero when a goal is missed. Options: --quick (fewer items),
 * --no-bulk (everything but the bulk runs, about 10 minutes shorter).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod/v4';
import { chmod, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../../emulator';
import { createManagementClient } from '../../shared/runtime';
import { NEWEST, cleanEnv, ensureN8n } from '../e2e/install';
import { runOrThrow } from '../e2e/processes';
import {
	holdsForPolling,
	pollCredential,
	pollingChecks,
	pollWorkflow,
	POLL_HELD_JOB_MS,
	POLL_WORKFLOW_ID,
} from '../e2e/polling';
import { Receiver } from '../e2e/receiver';
import { N8nRest, unflatten } from '../e2e/rest';
import { chain, type NodeSpec } from '../e2e/workflows';
import { Balancer } from './balancer';
import { eventually } from '../support/eventually';
import { Postgres, Redis } from '../support/services';
import { QueueCluster, missingPackages } from './cluster';
import { Goals, runScenarios } from './verdict';

const REPO = join(__dirname, '..', '..');
const PKG = 'n8n-nodes-gpu-cloud';
const LIMIT_PER_MINUTE = 240;
const quick = process.argv.includes('--quick');
const bulk = !process.argv.includes('--no-bulk');

const log = (line: string) => process.stderr.write(`[scale] ${line}\n`);

const goals = new Goals(log);
const check = (name: string, value: string, met: boolean) => goals.check(name, value, met);

async function packPackage(work: string): Promise<string> {
	const env = cleanEnv();
	await runOrThrow('npm', ['run', 'build', '--silent'], { cwd: REPO, env, timeoutMs: 300_000 });
	const packDir = join(work, 'pack');
	await mkdir(packDir, { recursive: true });
	await runOrThrow('npm', ['pack', '--pack-destination', packDir, '--loglevel=error'], {
		cwd: REPO,
		env,
		timeoutMs: 120_000,
	});
	const tarball = (await readdir(packDir)).find((file) => file.endsWith('.tgz'));
	if (!tarball) throw new Error('npm pack wrote no tarball');
	await runOrThrow('tar', ['-xzf', join(packDir, tarball), '-C', packDir], { timeoutMs: 60_000 });
	return join(packDir, 'package');
}

const CREDENTIALS = {
	management: { id: 'scaleGpuCloud001', name: 'GPU Cloud (emulator)' },
	limited: { id: 'scaleGpuCloud240', name: 'GPU Cloud (emulator limited to 240/min)' },
	image: { id: 'scaleImageWork01', name: 'GPU Cloud image workload (emulator)' },
};

function credentialData(emulator: RunningEmulator): Record<string, string> {
	return {
		apiKey: emulator.apiKey,
		baseUrl: emulator.baseUrl,
		organizationName: emulator.organization,
		defaultProject: emulator.project,
	};
}

const median = (values: number[]) =>
	[...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

const startWebhook = (path: string): NodeSpec => ({
	name: 'Start',
	type: 'n8n-nodes-base.webhook',
	typeVersion: 2,
	webhookId: randomUUID(),
	parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
});
const splitItems: NodeSpec = {
	name: 'Split Out',
	type: 'n8n-nodes-base.splitOut',
	typeVersion: 1,
	parameters: { fieldToSplitOut: 'body.items', options: {} },
};
const byName = (value: string) => ({ __rl: true, mode: 'name', value });

const TRIGGER_WEBHOOK_ID = randomUUID();
const IMAGE_SIDES = { width: 384, height: 256 };
const WORKFLOWS = {
	trigger: chain('scaleTrigger0001', 'scale: trigger', [
		{
			name: 'GPU Cloud Trigger',
			type: `${PKG}.gpuCloudTrigger`,
			webhookId: TRIGGER_WEBHOOK_ID,
			credentials: { gpuCloudApi: CREDENTIALS.management },
			parameters: {
				verification: 'credential',
				events: ['succeeded', 'failed', 'cancelled'],
				options: {},
			},
		},
		// What a workflow does with each job: here one read of it, counted at the service.
		{
			name: 'Read Job',
			type: `${PKG}.gpuCloud`,
			credentials: { gpuCloudApi: CREDENTIALS.management },
			parameters: {
				resource: 'job',
				operation: 'get',
				endpoint: byName('={{ $json.endpoint }}'),
				jobId: '={{ $json.id }}',
				options: {},
			},
		},
	]),
	image: chain('scaleImage000001', 'scale: image into binary data', [
		startWebhook('scale-image'),
		{
			name: 'Generate Image',
			type: `${PKG}.gpuCloud`,
			credentials: { gpuCloudWorkloadApi: CREDENTIALS.image },
			parameters: {
				resource: 'image',
				operation: 'generate',
				source: 'text',
				prompt: 'A harbour at night, ink drawing',
				workflowName: 'txt2img',
				imageSettings: { width: IMAGE_SIDES.width, height: IMAGE_SIDES.height, seed: 11 },
				delivery: 'wait',
				outputMode: 'perImage',
				binaryPropertyName: 'data',
				options: {},
			},
		},
	]),
	bulk: chain('scaleBulk0000001', 'scale: bulk creates', [
		startWebhook('scale-bulk'),
		splitItems,
		{
			name: 'Create Jobs',
			type: `${PKG}.gpuCloud`,
			credentials: { gpuCloudApi: CREDENTIALS.limited },
			parameters: {
				resource: 'job',
				operation: 'create',
				endpoint: byName('echo'),
				input: '={{ JSON.stringify({ bulk: $json.n }) }}',
				options: {},
			},
		},
	]),
	wait: chain('scaleWait0000001', 'scale: multi-item webhook wait', [
		startWebhook('scale-wait'),
		splitItems,
		{
			name: 'Create and Wait',
			type: `${PKG}.gpuCloud`,
			credentials: { gpuCloudApi: CREDENTIALS.management },
			parameters: {
				resource: 'job',
				operation: 'createAndWait',
				endpoint: byName('echo'),
				input: '={{ JSON.stringify({ n: $json.n }) }}',
				waitMode: 'webhook',
				timeoutMinutes: 5,
				options: {},
			},
		},
	]),
};

async function executions(
	postgres: Postgres,
	workflowId: string,
): Promise<Array<{ id: string; status: string }>> {
	const rows = await postgres.query(
		`SELECT id, status FROM execution_entity WHERE "workflowId" = '${workflowId}' ORDER BY id`,
	);
	return rows.map(([id, status]) => ({ id, status }));
}

async function post(url: string, body: unknown): Promise<number> {
	const response = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	await response.arrayBuffer();
	return response.status;
}

/** Trigger jobs end `endsApartMs` after each other (the emulator reads it from the job's input). */
function triggerJobDuration(_endpoint: string, input: unknown): number {
	const fields =
		typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
	const n = typeof fields.trigger === 'number' ? fields.trigger : 0;
	const apart = typeof fields.endsApartMs === 'number' ? fields.endsApartMs : 0;
	return 1_000 + n * apart;
}

async function triggerScenario(
	emulator: RunningEmulator,
	balancer: Balancer,
	postgres: Postgres,
	endsApartMs: number,
): Promise<void> {
	const jobs = 6;
	balancer.loseFirstReply = true;
	emulator.resetLogs();
	balancer.forwarded.length = 0;
	const before = new Set(
		(await executions(postgres, 'scaleTrigger0001')).map((execution) => execution.id),
	);
	const client = createManagementClient({
		baseUrl: emulator.baseUrl,
		organization: emulator.organization,
		apiKey: emulator.apiKey,
	});
	const url = `${balancer.url}/webhook/${TRIGGER_WEBHOOK_ID}/job-events`;
	const jobIds: string[] = [];
	for (let n = 0; n < jobs; n++)
		jobIds.push(
			(
				await client.jobs.create(emulator.genericEndpoint, {
					input: { trigger: n, endsApartMs },
					webhook_url: url,
				})
			).id,
		);
	await eventually(
		'every delivery settled',
		async () => {
			await emulator.deliveriesSettled();
			const delivered = new Set(
				emulator.deliveries
					.filter((attempt) => attempt.status === 200)
					.map((attempt) => attempt.jobId),
			);
			return delivered.size >= jobs ? true : undefined;
		},
		{ timeoutMs: 120_000, intervalMs: 500 },
	);
	balancer.loseFirstReply = false;
	const settled = await eventually(
		'trigger executions finished',
		async () => {
			const list = (await executions(postgres, 'scaleTrigger0001')).filter(
				(execution) => !before.has(execution.id),
			);
			return list.every((execution) => execution.status !== 'new' && execution.status !== 'running')
				? list
				: undefined;
		},
		{ timeoutMs: 60_000, intervalMs: 500 },
	);
	const upstreams = new Set(
		balancer.forwarded
			.filter((entry) => entry.path.includes(TRIGGER_WEBHOOK_ID))
			.map((entry) => entry.upstream),
	);
	const attempts = emulator.deliveries.length;
	const label = `trigger: 6 jobs ending ${endsApartMs ? `${endsApartMs / 1000} s apart` : 'together'}, each delivered twice to two processes`;
	if (upstreams.size !== 2)
		throw new Error(`${label}: the deliveries reached ${upstreams.size} process(es), not both`);
	const runs = await triggerRuns(
		postgres,
		settled.map((execution) => execution.id),
	);
	const passed = runs.filter((run) => run.itemsOut > 0);
	// What the workflow did per job, counted at the service: the reads of each job by "Read Job".
	const reads = jobIds.map(
		(id) =>
			emulator.requests.filter(
				(request) => request.method === 'GET' && request.path.endsWith(`/${id}`),
			).length,
	);
	// Executions started are measured, not held to one: a repeat the webhook processors cannot tell
	// apart (a concurrent static-data save lost its id) starts one, which stops at the trigger.
	log(
		`measured ${label}: ${settled.length} executions started (deliveries ${attempts} over ${upstreams.size} processes), ${passed.length} ran past the trigger, ${settled.length - passed.length} stopped at it`,
	);
	check(
		`${label}: runs of what follows the trigger, per job`,
		reads.join(' '),
		reads.every((count) => count === 1) && passed.length === jobs,
	);
	const firsts = balancer.forwarded.filter((entry) => entry.lost).map((entry) => entry.ms);
	const repeats = balancer.forwarded
		.filter((entry) => entry.path.includes(TRIGGER_WEBHOOK_ID) && !entry.lost)
		.map((entry) => entry.ms);
	const triggerMs = (list: TriggerRun[]) =>
		list.length ? `${median(list.map((run) => run.ms))} ms` : '-';
	log(
		`trigger: webhook processor answer, median: first delivery ${median(firsts)} ms, repeat ${median(repeats)} ms; ` +
			`the trigger's check inside the execution, median: new ${triggerMs(passed)}, repeat ${triggerMs(runs.filter((run) => run.itemsOut === 0))}`,
	);
}

interface TriggerRun {
	itemsOut: number;
	/** How long the trigger node ran in the execution (its check against n8n's processed-data table). */
	ms: number;
}

/** The trigger node's part of each execution, from the run data n8n keeps in the database. */
async function triggerRuns(postgres: Postgres, executionIds: string[]): Promise<TriggerRun[]> {
	if (executionIds.length === 0) return [];
	const rows = await postgres.query(
		`SELECT data FROM execution_data WHERE "executionId" IN (${executionIds.map(Number).join(',')})`,
	);
	return rows.map(([data]) => {
		const run = z
			.object({
				resultData: z.object({
					runData: z.record(
						z.string(),
						z.array(
							z.object({
								executionTime: z.number(),
								data: z.object({ main: z.array(z.array(z.unknown()).nullable()) }).optional(),
							}),
						),
					),
				}),
			})
			.parse(unflatten(data));
		const trigger = run.resultData.runData['GPU Cloud Trigger']?.[0];
		if (!trigger) throw new Error('an execution without a run of the trigger');
		return { itemsOut: trigger.data?.main[0]?.length ?? 0, ms: trigger.executionTime };
	});
}

/** An image generated by a workflow on a worker, kept by n8n as binary data in the database, read back. */
async function imageScenario(main: N8nRest, balancer: Balancer, postgres: Postgres): Promise<void> {
	const status = await post(`${balancer.url}/webhook/scale-image`, {});
	if (status !== 200) throw new Error(`starting the image execution answered ${status}`);
	const finished = await eventually(
		'the image execution finished',
		async () => {
			const list = await executions(postgres, 'scaleImage000001');
			return list.length === 1 && ['success', 'error', 'crashed'].includes(list[0].status)
				? list[0]
				: undefined;
		},
		{ timeoutMs: 120_000, intervalMs: 500 },
	);
	if (finished.status !== 'success')
		throw new Error(`the image execution ended ${finished.status}`);
	const file = (await main.execution(finished.id)).binaries.get('Generate Image')?.[0]?.data;
	if (!file?.id) throw new Error('the image item has no stored file');
	const [row] = await postgres.query(
		`SELECT "mimeType", "fileSize", octet_length(data) FROM binary_data WHERE "fileId" = '${file.id.slice(file.id.indexOf(':') + 1)}'`,
	);
	const served = await main.binaryData(file.id);
	const png = served.bytes
		.subarray(0, 8)
		.equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
	const sides = png
		? { width: served.bytes.readUInt32BE(16), height: served.bytes.readUInt32BE(20) }
		: undefined;
	check(
		'image on a worker into binary data (database), read back through the REST API',
		`${file.id.split(':')[0]} mode, ${file.mimeType}, ${served.bytes.length} bytes served as ${served.contentType}, ` +
			`table row ${row ? `${row[0]} ${row[1]} bytes (${row[2]} stored)` : 'missing'}, PNG ${sides ? `${sides.width}x${sides.height}` : 'no'}`,
		file.id.startsWith('database:') &&
			file.mimeType === 'image/png' &&
			served.contentType.startsWith('image/png') &&
			row !== undefined &&
			row[0] === 'image/png' &&
			Number(row[1]) === served.bytes.length &&
			Number(row[2]) === served.bytes.length &&
			sides?.width === IMAGE_SIDES.width &&
			sides.height === IMAGE_SIDES.height,
	);
}

async function bulkScenario(
	label: string,
	emulator: RunningEmulator,
	balancer: Balancer,
	postgres: Postgres,
	executionsToStart: number,
	itemsEach: number,
): Promise<void> {
	emulator.resetLogs();
	const before = new Set(
		(await executions(postgres, 'scaleBulk0000001')).map((execution) => execution.id),
	);
	const started = Date.now();
	for (let n = 0; n < executionsToStart; n++) {
		const status = await post(`${balancer.url}/webhook/scale-bulk`, {
			items: Array.from({ length: itemsEach }, (_, index) => ({ n: n * itemsEach + index })),
		});
		if (status !== 200) throw new Error(`starting bulk execution ${n + 1} answered ${status}`);
	}
	const total = executionsToStart * itemsEach;
	const finished = await eventually(
		`${label}: bulk executions finished`,
		async () => {
			const list = (await executions(postgres, 'scaleBulk0000001')).filter(
				(execution) => !before.has(execution.id),
			);
			return list.length === executionsToStart &&
				list.every((execution) => !['new', 'running', 'waiting'].includes(execution.status))
				? list
				: undefined;
		},
		{ timeoutMs: 20 * 60_000, intervalMs: 500 },
	);
	const management = emulator.requests.filter((request) => request.surface === 'management');
	const creates = management
		.filter((request) => request.method === 'POST' && request.status === 201)
		.map((request) => request.time);
	const refused = management.filter((request) => request.status === 429).length;
	const minutes = (Math.max(...creates) - Math.min(...creates)) / 60_000;
	const afterFirstMinute = creates.filter((time) => time >= Math.min(...creates) + 60_000).length;
	const steady = afterFirstMinute / Math.max(minutes - 1, 1 / 60);
	const failed = finished.filter((execution) => execution.status !== 'success').length;
	log(
		`${label}: ${creates.length} of ${total} jobs created in ${((Date.now() - started) / 1000).toFixed(0)} s, ${refused} 429s of ${management.length} requests, executions ${finished.map((execution) => execution.status).join(', ')}`,
	);
	check(
		`${label}: failed executions / items`,
		`${failed} / ${total - creates.length}`,
		failed === 0 && creates.length === total,
	);
	check(
		`${label}: creates per minute after the first minute, share of ${LIMIT_PER_MINUTE}/min`,
		`${steady.toFixed(0)}/min (${((100 * steady) / LIMIT_PER_MINUTE).toFixed(0)} %)`,
		steady >= 0.9 * LIMIT_PER_MINUTE,
	);
	check(
		`${label}: 429s`,
		`${((100 * refused) / management.length).toFixed(2)} % of ${management.length} requests`,
		refused < 0.02 * management.length,
	);
}

async function waitScenario(
	emulator: RunningEmulator,
	balancer: Balancer,
	postgres: Postgres,
): Promise<void> {
	emulator.resetLogs();
	const status = await post(`${balancer.url}/webhook/scale-wait`, {
		items: Array.from({ length: 6 }, (_, n) => ({ n })),
	});
	if (status !== 200) throw new Error(`starting the waiting execution answered ${status}`);
	const finished = await eventually(
		'the waiting execution finished',
		async () => {
			const list = await executions(postgres, 'scaleWait0000001');
			return list.length === 1 && ['success', 'error', 'crashed'].includes(list[0].status)
				? list[0]
				: undefined;
		},
		{ timeoutMs: 5 * 60_000, intervalMs: 500 },
	);
	await emulator.deliveriesSettled();
	const failedDeliveries = emulator.deliveries.filter((attempt) => attempt.status !== 200).length;
	check(
		'multi-item webhook wait: execution status',
		finished.status,
		finished.status === 'success',
	);
	check(
		'multi-item webhook wait: failed deliveries',
		`${failedDeliveries} of ${emulator.deliveries.length} attempts`,
		failedDeliveries === 0,
	);
}

/** The Poll Trigger in queue mode: the main instance polls and is restarted; workers run the executions. */
async function pollingScenario(
	rest: N8nRest,
	cluster: QueueCluster,
	emulator: RunningEmulator,
	receiver: Receiver,
): Promise<void> {
	await pollingChecks({
		activate: () => rest.activate(POLL_WORKFLOW_ID),
		restart: async (whileDown) => {
			await cluster.stop('main');
			await whileDown();
			await cluster.start('main', 'main');
		},
		emulator,
		receiver,
		check: async (name, body) => {
			try {
				await body();
				check(name, 'as expected', true);
			} catch (error) {
				check(name, error instanceof Error ? error.message : String(error), false);
			}
		},
		expect: (condition, message) => {
			if (!condition) throw new Error(message);
		},
		log,
	});
}

async function main(): Promise<number> {
	const missing = await missingPackages();
	if (missing.length)
		throw new Error(
			`install ${missing.join(' and ')} first (apt-get install -y ${missing.join(' ')})`,
		);
	const work = await mkdtemp(join(tmpdir(), 'gpu-cloud-scale-'));
	// PostgreSQL runs as its own user, which must reach its data directory inside.
	await chmod(work, 0o755);
	const logs = join(work, 'logs');
	await mkdir(logs, { recursive: true });
	log(`work folder ${work}`);
	const cleanups: Array<() => Promise<void>> = [];
	try {
		const install = await ensureN8n(NEWEST, log);
		const unpacked = await packPackage(work);
		log('packed the package');
		const postgres = await Postgres.start(join(work, 'pg'), logs);
		cleanups.push(() => postgres.stop());
		const redis = await Redis.start(join(work, 'redis'), { logDir: logs });
		cleanups.push(() => redis.stop());
		log(`PostgreSQL on ${postgres.port}, Redis on ${redis.port}`);
		const emulator = await startEmulator({
			port: 0,
			jobDurationMs: triggerJobDuration,
			webhookRetryDelaysMs: [1_000, 2_000, 4_000, 8_000],
		});
		cleanups.push(() => emulator.close());
		const limited = await startEmulator({
			port: 0,
			jobDurationMs: 600_000,
			rateLimitPerMinute: LIMIT_PER_MINUTE,
			faults: { latencyMs: 100, surfaces: ['management'] },
		});
		cleanups.push(() => limited.close());
		const balancer = await Balancer.start();
		cleanups.push(() => balancer.close());
		const polled = await startEmulator({
			port: 0,
			jobDurationMs: (_endpoint, input) => (holdsForPolling(input) ? POLL_HELD_JOB_MS : 500),
		});
		cleanups.push(() => polled.close());
		const receiver = await Receiver.start();
		cleanups.push(() => receiver.close());

		const cluster = new QueueCluster({
			install,
			root: join(work, 'n8n'),
			packageDir: unpacked,
			packageName: PKG,
			postgres,
			redis,
			webhookBaseUrl: `${balancer.url}/`,
		});
		cleanups.push(() => cluster.stopAll());
		await cluster.prepareMain();
		await cluster.importJson('credentials', [
			{ ...CREDENTIALS.management, type: 'gpuCloudApi', data: credentialData(emulator) },
			{ ...CREDENTIALS.limited, type: 'gpuCloudApi', data: credentialData(limited) },
			{
				...CREDENTIALS.image,
				type: 'gpuCloudWorkloadApi',
				data: { serviceUrl: emulator.imageUrl, apiKey: emulator.apiKey },
			},
			pollCredential(polled),
		]);
		// The poll workflow is activated later, by its scenario.
		await cluster.importJson('workflow', [
			...Object.values(WORKFLOWS),
			pollWorkflow(PKG, receiver),
		]);
		for (const workflow of Object.values(WORKFLOWS))
			await cluster.cli(['publish:workflow', `--id=${String(workflow.id)}`]);
		const main = await cluster.start('main', 'main');
		const processors = [
			await cluster.start('webhook', 'webhook-1'),
			await cluster.start('webhook', 'webhook-2'),
		];
		balancer.route(processors.map((processor) => processor.port));
		await cluster.start('worker', 'worker-1');
		await cluster.start('worker', 'worker-2');
		log('n8n 2.41.3 in queue mode: main, 2 webhook processors, 2 workers');

		// 1,200 items in all each time, as the issue measured; --quick: 300.
		const items = quick ? 75 : 300;
		return await runScenarios(
			[
				{
					name: 'trigger, ends 1 s apart',
					run: () => triggerScenario(emulator, balancer, postgres, 1_000),
				},
				{
					name: 'trigger, ends together',
					run: () => triggerScenario(emulator, balancer, postgres, 0),
				},
				{ name: 'webhook wait', run: () => waitScenario(emulator, balancer, postgres) },
				{
					name: 'image and poll trigger',
					run: async () => {
						const rest = await N8nRest.setUpOwner(`http://127.0.0.1:${main.port}`);
						await imageScenario(rest, balancer, postgres);
						await pollingScenario(rest, cluster, polled, receiver);
					},
				},
				{
					name: 'bulk, 2 workers',
					bulk: true,
					run: () => bulkScenario('2 workers, 4 executions', limited, balancer, postgres, 4, items),
				},
				{
					name: 'bulk, 3 workers',
					bulk: true,
					run: async () => {
						// The service's window empties before the next run; the workers keep what they learned.
						await new Promise((resolve) => setTimeout(resolve, 61_000));
						await cluster.start('worker', 'worker-3');
						await bulkScenario(
							'3 workers, 6 executions',
							limited,
							balancer,
							postgres,
							6,
							(items * 2) / 3,
						);
					},
				},
			],
			{ bulk },
			goals,
		);
	} finally {
		for (const cleanup of cleanups.reverse())
			await cleanup().catch((error: unknown) => log(`cleanup: ${String(error)}`));
		if (!process.argv.includes('--keep'))
			await rm(work, { recursive: true, force: true }).catch(() => undefined);
	}
}

main().then(
	(code) => {
		process.exitCode = code;
	},
	(error: unknown) => {
		log(`FAIL ${error instanceof Error ? error.message : String(error)}`);
		process.exitCode = 1;
	},
);
