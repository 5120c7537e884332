import { content } from '../slack/harness';
import { eventually } from '../support/eventually';
import { Cluster } from './cluster';

/**
 * Two replicas on Redis (`npm run test:replicas`). One takes three jobs, the create reply of the
 * first lost (the service made the job and never answered), and is SIGKILLed. The other's sweep
 * takes its work over from the recorded requests, as a restart does: nothing asked of the service
 * while the dead replica's leases run out, then one read per recorded job and one listing of the
 * endpoint for the lost create; every result posted once.
 */

jest.setTimeout(180_000);

const CHANNEL = 'C0SWEEP';
const USERS = ['U0SWEEP1', 'U0SWEEP2', 'U0SWEEP3'];

it("a dead replica's jobs are taken over with one read each and one listing for its lost create", async () => {
	const cluster = await Cluster.start({
		replicas: 2,
		redis: true,
		// The jobs outlast the dead replica's leases (10 s): the sweep finds them running.
		emulator: { jobDurationMs: 25_000 },
		env: { SLACK_POLL_INTERVAL_MS: '1000', LOG_LEVEL: 'info' },
	});
	const { stack } = cluster;
	const [doomed, survivor] = cluster.replicas;
	try {
		// Every command reaches the replica that will die.
		stack.standin.setAppUrl(`http://127.0.0.1:${doomed.port}/slack/events`);
		const parentWithJob = (n: number) =>
			stack.standin.waitFor(
				() => {
					const parent = stack.parents(CHANNEL)[n];
					return parent && /Job `/.test(content(parent)) ? parent : undefined;
				},
				15_000,
				`parent ${n + 1} naming its job`,
			);
		const made = () => stack.emulator.jobsOf(stack.emulator.organization).length;
		stack.emulator.setFaults({ sequence: ['hang'], lateArrivalMs: 0 });
		await stack.command('transcribe https://files.example/lost.mp3', USERS[0], CHANNEL);
		await eventually('the lost create to make its job', () => made() === 1, {
			timeoutMs: 15_000,
		});
		for (const [n, user] of USERS.slice(1).entries()) {
			await stack.command(`transcribe https://files.example/kept-${n}.mp3`, user, CHANNEL);
			await parentWithJob(n + 1);
		}
		const created = stack.emulator.jobsOf(stack.emulator.organization).map((job) => job.id);
		expect(created).toHaveLength(3);

		await doomed.kill('SIGKILL');
		stack.emulator.resetLogs();
		// The dead replica's leases run out at moments of their own, so the takeover may come in more
		// than one pass, and the survivor's polls (one listing of the endpoint a round) of the jobs it
		// took over may come between them: what is counted is the reads of single jobs, which only
		// the takeover makes.
		const takenOver = () =>
			[...survivor.output.matchAll(/Took over (\d+) running job\(s\)/g)].reduce(
				(sum, match) => sum + Number(match[1]),
				0,
			);
		await eventually('the survivor to say it took the three jobs over', () => takenOver() >= 3, {
			timeoutMs: 60_000,
			intervalMs: 100,
		});
		const jobRequests = stack.emulator.requests
			.filter((request) => /\/jobs(\/|$)/.test(request.path))
			.map((request) => `${request.method} ${request.path.replace(/.*\/jobs/, '/jobs')}`);
		// One read per recorded job; the lost create's job is found by a listing, not read.
		for (const id of created.slice(1))
			expect(jobRequests.filter((request) => request === `GET /jobs/${id}`)).toHaveLength(1);
		expect(jobRequests.filter((request) => request === `GET /jobs/${created[0]}`)).toEqual([]);
		expect(jobRequests[0]).toMatch(/^GET \/jobs/);
		expect(jobRequests).toContain('GET /jobs');
		expect(takenOver()).toBe(3);

		const parents = stack.parents(CHANNEL);
		expect(parents).toHaveLength(3);
		for (const parent of parents) {
			await stack.waitForParentText(parent.ts, /Succeeded in/, 40_000, CHANNEL);
			await stack.standin.waitFor(
				() => stack.replies(parent.ts, CHANNEL).length > 0 || undefined,
				10_000,
				'the result',
			);
		}
		for (const parent of parents) expect(stack.replies(parent.ts, CHANNEL)).toHaveLength(1);
	} finally {
		await cluster.close();
	}
});
