import { setTimeout as sleep } from 'node:timers/promises';
import { startEmulator, type RunningEmulator } from '../../emulator';
import { Catalogue } from '../../slack-app/features/catalogue';
import { createManagementClient } from '../../shared/runtime';
import { eventually } from '../support/eventually';
import { ManualClock } from '../support/manual-clock';

/**
 * The catalogue behind every `/gpu job`'s endpoint check. Its listing goes through the client's
 * pacing to the key's budget like any request, so once that budget is spent (hundreds of creates
 * waiting their turn) a refresh waits minutes: a command must not wait with it for an endpoint the
 * catalogue already knows.
 */

let emulator: RunningEmulator;

beforeEach(async () => {
	emulator = await startEmulator({ port: 0 });
});

afterEach(async () => {
	await emulator.close();
});

/** A catalogue of the emulator's endpoints, cached for 60 s on a clock the test moves. */
function catalogueOnEmulator(): { clock: ManualClock; catalogue: Catalogue } {
	const clock = new ManualClock(Date.now());
	const management = createManagementClient({
		baseUrl: emulator.baseUrl,
		organization: emulator.organization,
		apiKey: emulator.apiKey,
	});
	return { clock, catalogue: new Catalogue(management, clock, 60_000) };
}

const listings = () =>
	emulator.requests.filter((request) => request.path.endsWith('/inference-endpoints'));

it('finds an endpoint it has listed at once after the cache has expired, and lists again in the background', async () => {
	const { clock, catalogue } = catalogueOnEmulator();
	const endpoint = emulator.genericEndpoint;
	expect((await catalogue.find(endpoint))?.name).toBe(endpoint);
	expect(listings()).toHaveLength(1);

	await clock.advance(61_000);
	// The refresh now takes 5 s, as it would behind a queue of creates.
	emulator.setFaults({ latencyMs: 5_000, surfaces: ['management'] });
	const found = await Promise.race([catalogue.find(endpoint), sleep(1_000).then(() => 'waited')]);
	expect(found).toEqual(expect.objectContaining({ name: endpoint }));
	await eventually('the background listing', async () => listings().length === 2, {
		timeoutMs: 10_000,
		intervalMs: 100,
	});
});

it('waits for the listing when the expired cache does not have the endpoint (it may be new)', async () => {
	const { clock, catalogue } = catalogueOnEmulator();
	expect(await catalogue.find('no-such-endpoint')).toBeUndefined();
	await clock.advance(61_000);
	expect(await catalogue.find('no-such-endpoint')).toBeUndefined();
	expect(listings()).toHaveLength(2);
});
