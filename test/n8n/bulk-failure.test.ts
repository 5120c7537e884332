import type { INodeParameters } from 'n8n-workflow';
import { z } from 'zod';
import { gpuCloudWorkflow, managementRequests, startProxy, startRig, type Rig } from './fixtures';
import { errorOf, type Execution } from './harness';

/**
 * A bulk run that fails midway must not hide the paid work it already did: the error names every
 * item whose job exists on GPU Cloud, so a re-run can skip them. The failure is GPU Cloud answering
 * every request with a server error (the emulator's error fault), which outlasts the client's
 * retries (a 429 no longer would: the client waits those out). A pass-through proxy switches the
 * fault on just before a given job-creating request reaches the emulator, so the failure lands
 * mid-run whatever the timing.
 */

let rig: Rig;
let proxy: { close(): Promise<void> };
let createsBeforeFault = Number.POSITIVE_INFINITY;
let createsSeen = 0;
let createsAnswered = 0;

async function answered(count: number): Promise<void> {
	while (createsAnswered < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

const isCreate = (incoming: { method?: string; url?: string }) =>
	incoming.method === 'POST' && incoming.url?.endsWith('/jobs') === true;

beforeAll(async () => {
	rig = await startRig({ rateLimitPerMinute: 0 });
	proxy = await startProxy(rig, {
		// Creates after the first few wait until those are answered, then meet the fault.
		before: async (incoming) => {
			if (!isCreate(incoming) || ++createsSeen <= createsBeforeFault) return;
			await answered(createsBeforeFault);
			rig.emulator.setFaults({ errorRate: 1 });
		},
		after: (incoming) => {
			if (isCreate(incoming)) createsAnswered++;
		},
	});
});

afterAll(async () => {
	await proxy.close();
	await rig.close();
});

const ITEMS = 24;
const CREATES_BEFORE_FAULT = 5;
/** More than CREATES_BEFORE_FAULT: a create is still to come while the first jobs are being waited for. */
const CONCURRENCY = 8;
const createdJobsSchema = z.array(z.object({ itemIndex: z.number().int(), jobId: z.string() }));

/** The `index` of every item whose job GPU Cloud accepted, read from the requests it answered. */
function itemsGpuCloudCreated(): number[] {
	return managementRequests(rig.emulator)
		.filter(
			(request) =>
				request.method === 'POST' && request.path.endsWith('/jobs') && request.status < 300,
		)
		.map(
			(request) =>
				z
					.object({ metadata: z.object({ index: z.number() }) })
					.parse(JSON.parse(request.body ?? '{}')).metadata.index,
		)
		.sort((a, b) => a - b);
}

function createdJobsOf(execution: Execution): z.infer<typeof createdJobsSchema> {
	const error = execution.run?.data.resultData.error;
	return createdJobsSchema.parse(error?.context?.createdJobs);
}

const metadata = '={{ { "index": $json.index } }}';

describe.each<[string, INodeParameters]>([
	[
		'Job > Create',
		{
			resource: 'job',
			operation: 'create',
			endpoint: { __rl: true, mode: 'name', value: 'echo' },
			input: '={{ { "n": $json.index } }}',
			options: { metadata, concurrency: CONCURRENCY },
		},
	],
	[
		'Job > Create and Wait',
		{
			resource: 'job',
			operation: 'createAndWait',
			endpoint: { __rl: true, mode: 'name', value: 'echo' },
			input: '={{ { "n": $json.index } }}',
			options: { metadata, concurrency: CONCURRENCY },
		},
	],
	[
		'Transcription > Transcribe',
		{
			resource: 'transcription',
			operation: 'transcribe',
			url: '={{ "https://files.example/call-" + $json.index + ".mp3" }}',
			options: { metadata, concurrency: CONCURRENCY },
		},
	],
])('%s over many items, stopped midway by server errors', (_name, parameters) => {
	test('fails naming every item whose job was created, and only those', async () => {
		rig.emulator.setFaults({ errorRate: 0 });
		rig.emulator.resetLogs();
		createsSeen = 0;
		createsAnswered = 0;
		createsBeforeFault = CREATES_BEFORE_FAULT;
		const spec = gpuCloudWorkflow(parameters, {
			items: Array.from({ length: ITEMS }, (_, index) => ({ index })),
		});
		spec.nodes[1].credentials = { gpuCloudApi: 'proxied' };
		const execution = await rig.harness.run(spec);
		createsBeforeFault = Number.POSITIVE_INFINITY;
		rig.emulator.setFaults({ errorRate: 0 });

		expect(errorOf(execution)?.message).toMatch(/temporarily unavailable/);
		const created = itemsGpuCloudCreated();
		expect(created.length).toBeGreaterThanOrEqual(CREATES_BEFORE_FAULT);
		expect(created.length).toBeLessThan(ITEMS);

		const reported = createdJobsOf(execution);
		expect(reported.map((entry) => entry.itemIndex)).toEqual(created);
		for (const { itemIndex, jobId } of reported) {
			expect(rig.emulator.getJob(jobId)?.metadata).toMatchObject({ index: itemIndex });
			expect(errorOf(execution)?.description).toContain(`item ${itemIndex}: job ${jobId}`);
		}
		expect(errorOf(execution)?.description).toContain(
			`Jobs were already created for ${created.length} of ${ITEMS} items`,
		);
	}, 30_000);
});
