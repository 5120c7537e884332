import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INodeParameters } from 'n8n-workflow';
import { z } from 'zod';
import { gpuCloudWorkflow, managementRequests, startRig, type Rig } from './fixtures';
import { errorOf, type Execution } from './harness';

/**
 * A bulk run that fails midway must not hide the paid work it already did: the error names every
 * item whose job exists on GPU Cloud, so a re-run can skip them. The failure is GPU Cloud refusing
 * every request for rate (the emulator's rate-limit fault), which outlasts the client's retries.
 * A pass-through proxy switches the fault on just before a given job-creating request reaches the
 * emulator, so the failure lands mid-run whatever the timing; waits ride out a 429, creates do not.
 */

let rig: Rig;
let proxy: Server;
let createsBeforeFault = Number.POSITIVE_INFINITY;
let createsSeen = 0;
/** Job-creating requests the proxy has answered, and a way to await a count. */
const createsAnswered = {
  count: 0,
  async reached(count: number): Promise<void> {
    while (this.count < count) await new Promise((resolve) => setTimeout(resolve, 5));
  },
};

beforeAll(async () => {
  rig = await startRig({ rateLimitPerMinute: 0 });
  const target = new URL(rig.emulator.origin);
  proxy = createServer((incoming, outgoing) => {
    const forward = () => {
      const forwarded = request({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
      });
      incoming.pipe(forwarded);
    };
    const isCreate = incoming.method === 'POST' && incoming.url?.endsWith('/jobs');
    if (!isCreate || ++createsSeen <= createsBeforeFault) {
      if (isCreate) outgoing.on('finish', () => createsAnswered.count++);
      forward();
      return;
    }
    // Later creates wait until the first ones are answered, then meet the fault.
    void createsAnswered.reached(createsBeforeFault).then(() => {
      rig.emulator.setFaults({ rateLimitRate: 1 });
      forward();
    });
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  rig.harness.setCredentials('proxied', 'gpuCloudApi', {
    apiKey: rig.emulator.apiKey,
    baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/public`,
    organizationName: rig.emulator.organization,
  });
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
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
    .filter((request) => request.method === 'POST' && request.path.endsWith('/jobs') && request.status < 300)
    .map((request) => z.object({ metadata: z.object({ index: z.number() }) }).parse(JSON.parse(request.body ?? '{}')).metadata.index)
    .sort((a, b) => a - b);
}

function createdJobsOf(execution: Execution): z.infer<typeof createdJobsSchema> {
  const error = execution.run?.data.resultData.error;
  return createdJobsSchema.parse(error?.context?.createdJobs);
}

const metadata = '={{ { "index": $json.index } }}';

describe.each<[string, INodeParameters]>([
  ['Job > Create', { resource: 'job', operation: 'create', endpoint: { __rl: true, mode: 'name', value: 'echo' }, input: '={{ { "n": $json.index } }}', options: { metadata, concurrency: CONCURRENCY } }],
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
    { resource: 'transcription', operation: 'transcribe', url: '={{ "https://files.example/call-" + $json.index + ".mp3" }}', options: { metadata, concurrency: CONCURRENCY } },
  ],
])('%s over many items, stopped midway by the rate limit', (_name, parameters) => {
  test('fails naming every item whose job was created, and only those', async () => {
    rig.emulator.setFaults({ rateLimitRate: 0 });
    rig.emulator.resetLogs();
    createsSeen = 0;
    createsAnswered.count = 0;
    createsBeforeFault = CREATES_BEFORE_FAULT;
    const spec = gpuCloudWorkflow(parameters, { items: Array.from({ length: ITEMS }, (_, index) => ({ index })) });
    spec.nodes[1].credentials = { gpuCloudApi: 'proxied' };
    const execution = await rig.harness.run(spec);
    createsBeforeFault = Number.POSITIVE_INFINITY;
    rig.emulator.setFaults({ rateLimitRate: 0 });

    expect(errorOf(execution)?.message).toMatch(/Too many requests/);
    const created = itemsGpuCloudCreated();
    expect(created.length).toBeGreaterThanOrEqual(CREATES_BEFORE_FAULT);
    expect(created.length).toBeLessThan(ITEMS);

    const reported = createdJobsOf(execution);
    expect(reported.map((entry) => entry.itemIndex)).toEqual(created);
    for (const { itemIndex, jobId } of reported) {
      expect(rig.emulator.getJob(jobId)?.metadata).toMatchObject({ index: itemIndex });
      expect(errorOf(execution)?.description).toContain(`item ${itemIndex}: job ${jobId}`);
    }
    expect(errorOf(execution)?.description).toContain(`Jobs were already created for ${created.length} of ${ITEMS} items`);
  }, 30_000);
});
