/**
 * jobs.createAndWait as the n8n node uses it: the create can have a signal of its own, so a wait
 * stopped because another item failed never cuts off a create whose job would then exist unreported.
 */
import type { Job } from '../../shared';
import type { ManagementClient } from '../../shared/client';
import { emulatorClient, useEmulator } from '../support/emulator';
import { FakeClock } from '../support/fake-clock';

describe('jobs.createAndWait', () => {
	const setup = useEmulator();
	let client: ManagementClient;

	beforeEach(() => {
		client = emulatorClient(setup.emulator, setup.transport, new FakeClock());
	});

	const stopped = () => AbortSignal.abort(new Error('stopped'));
	const jobs = () => setup.emulator.jobsOf(setup.emulator.organization);

	it('creates despite a stopped `signal` when the create has its own, and reports the job', async () => {
		const created: Job[] = [];
		await expect(
			client.jobs.createAndWait(
				'echo',
				{ input: {} },
				{ createSignal: undefined, signal: stopped(), onCreated: (c) => created.push(c) },
			),
		).rejects.toThrow();
		expect(created.map((c) => c.id)).toEqual(jobs().map((job) => job.id));
		expect(created).toHaveLength(1);
		expect(setup.emulator.requests.map((r) => r.method)).toEqual(['POST']);
	});

	it('lets `signal` stop the create when the create has no signal of its own', async () => {
		const created: Job[] = [];
		await expect(
			client.jobs.createAndWait(
				'echo',
				{ input: {} },
				{ signal: stopped(), onCreated: (c) => created.push(c) },
			),
		).rejects.toThrow();
		expect(created).toEqual([]);
		// The call has ended; a listing answered after it shows that nothing reached the service.
		await expect(client.jobs.list('echo')).resolves.toMatchObject({ total_size: 0 });
		expect(setup.emulator.requests.map((r) => r.method)).toEqual(['GET']);
	});
});
