/**
 * jobs.createAndWait as the n8n node uses it: the create can have a signal of its own, so a wait
 * stopped because another item failed never cuts off a create whose job would then exist unreported.
 */
import type { Job } from '../../shared';
import type { ManagementClient } from '../../shared/client';
import { FakeClock } from '../support/fake-clock';
import { jobFixture } from '../support/fixtures';
import { jsonReply, scriptedManagementClient, useScriptedServer } from '../support/scripted-server';

describe('jobs.createAndWait', () => {
	const { server, transport } = useScriptedServer();
	let client: ManagementClient;

	beforeEach(() => {
		server.reset();
		client = scriptedManagementClient(server, transport, new FakeClock());
	});

	const stopped = () => AbortSignal.abort(new Error('stopped'));

	it('creates despite a stopped `signal` when the create has its own, and reports the job', async () => {
		const job = jobFixture();
		server.script(jsonReply(201, job));
		const created: Job[] = [];
		await expect(
			client.jobs.createAndWait(
				'transcribe',
				{ input: {} },
				{ createSignal: undefined, signal: stopped(), onCreated: (c) => created.push(c) },
			),
		).rejects.toThrow();
		expect(created.map((c) => c.id)).toEqual([job.id]);
		expect(server.received.map((r) => r.method)).toEqual(['POST']);
	});

	it('lets `signal` stop the create when the create has no signal of its own', async () => {
		server.script(jsonReply(201, jobFixture()));
		const created: Job[] = [];
		await expect(
			client.jobs.createAndWait(
				'transcribe',
				{ input: {} },
				{ signal: stopped(), onCreated: (c) => created.push(c) },
			),
		).rejects.toThrow();
		expect(created).toEqual([]);
		expect(server.received).toEqual([]);
	});
});
