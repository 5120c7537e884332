import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { byName, gpuCloudWorkflow, managementRequests, startRig, type Rig } from './fixtures';
import { errorOf, outputOf } from './harness';

let rig: Rig;
/** A pass-through proxy in front of the emulator that counts requests in flight. */
let proxy: Server;
let inFlight = 0;
let maxInFlight = 0;

beforeAll(async () => {
  // Every management request takes a little while, so overlapping requests really overlap.
  rig = await startRig({ faults: { latencyMs: 15, surfaces: ['management'] } });
  const target = new URL(rig.emulator.origin);
  proxy = createServer((incoming, outgoing) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const forwarded = request(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
        response.on('end', () => inFlight--);
      },
    );
    incoming.pipe(forwarded);
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

function bulkCreate(count: number, concurrency: number) {
  const spec = gpuCloudWorkflow(
    {
      resource: 'job',
      operation: 'create',
      endpoint: byName('sentiment'),
      input: '={{ { "text": "item " + $json.index } }}',
      options: { metadata: '={{ { "index": $json.index } }}', concurrency },
    },
    { items: Array.from({ length: count }, (_, index) => ({ index })) },
  );
  spec.nodes[1].credentials = { gpuCloudApi: 'proxied' };
  return spec;
}

describe('Many input items', () => {
  test('200 items run at most "Concurrency" at a time and come out in input order, each paired with its item', async () => {
    maxInFlight = 0;
    const execution = await rig.harness.run(bulkCreate(200, 8));
    expect(errorOf(execution)).toBeUndefined();
    const output = outputOf(execution, 'GPU Cloud');
    expect(output).toHaveLength(200);
    output.forEach((item, index) => {
      expect(item.pairedItem).toEqual({ item: index });
      expect(item.json).toMatchObject({ status: 'pending', input: { text: `item ${index}` }, metadata: { index } });
    });
    expect(new Set(output.map((item) => item.json.id)).size).toBe(200);
    expect(maxInFlight).toBeLessThanOrEqual(8);
    expect(maxInFlight).toBeGreaterThan(1);
    expect(managementRequests(rig.emulator).filter((entry) => entry.method === 'POST')).toHaveLength(200);
  });

  test('a concurrency of 1 sends one request at a time', async () => {
    maxInFlight = 0;
    const execution = await rig.harness.run(bulkCreate(10, 1));
    expect(outputOf(execution, 'GPU Cloud')).toHaveLength(10);
    expect(maxInFlight).toBe(1);
  });
});
