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
/** The emulator's clock: a listing held by its latency fault waits until the test moves it. */
let serviceClock: ManualClock;

beforeEach(async () => {
	serviceClock = new ManualClock();
	emulator = await startEmulator({ port: 0, clock: serviceClock });
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
	// The refresh now waits at the service until the test lets it through, as it would behind a
	// queue of creates.
	emulator.setFaults({ latencyMs: 5_000, surfaces: ['management'] });
	let answered = false;
	const finding = catalogue.find(endpoint).finally(() => (answered = true));
	// Answered while the refresh is still held: it did not wait for the listing (however slow the
	// machine, the listing never ends until the test moves the service's clock).
	await eventually('the answer from the expired cache', () => answered);
	expect(await finding).toEqual(expect.objectContaining({ name: endpoint }));
	await eventually('the refresh held at the service', () => serviceClock.pendingTimers === 1);
	await serviceClock.advance(5_000);
	await eventually('the background listing', async () => listings().length === 2);
});

it('waits for the listing when the expired cache does not have the endpoint (it may be new)', async () => {
	const { clock, catalogue } = catalogueOnEmulator();
	expect(await catalogue.find('no-such-endpoint')).toBeUndefined();
	await clock.advance(61_000);
	expect(await catalogue.find('no-such-endpoint')).toBeUndefined();
	expect(listings()).toHaveLength(2);
});
