/**
 * The faults that stand in for what goes wrong between a client and the service: a scripted
 * sequence, the 429's Retry-After, the edge's own pages, lost connections and replies, requests the
 * service gets late, stalled replies and cut streams.
 */
import { connect } from 'node:net';
import { jobPageSchema } from '../../shared/schemas';
import type { FaultOptions, RunningEmulator } from '../../emulator';
import { banner, optionsOf, readFlags, USAGE } from '../../emulator/cli-flags';
import { eventually } from '../support/eventually';
import { api, call, emulatorFor, expectProblem, ManualClock, orgPath } from './helpers';

let emulator: RunningEmulator;
afterEach(() => emulator.close());

async function faulty(faults: FaultOptions, clock?: ManualClock) {
	emulator = await emulatorFor({ faults, ...(clock ? { clock } : {}) });
	return emulator;
}

const listPath = () => orgPath(emulator, '/inference-endpoints');
const jobsPath = () => orgPath(emulator, '/inference-endpoints/echo/jobs');
const jobs = () => emulator.jobsOf(emulator.organization);
const faultsSeen = () => emulator.requests.map((r) => r.fault ?? 'none');

/**
 * Sends a create over a raw socket and resolves with every byte that came back once the emulator
 * has logged the request and then closed: whatever a fault sends, it sends before it is logged.
 */
async function rawCreate(input: unknown): Promise<string> {
	const socket = connect(emulator.port, '127.0.0.1');
	const received: Buffer[] = [];
	socket.on('data', (chunk: Buffer) => received.push(chunk));
	const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
	const body = JSON.stringify({ input });
	socket.write(
		`POST /api/public${jobsPath()} HTTP/1.1\r\nhost: x\r\nservice-api-key: ${emulator.apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
	);
	await eventually('the create to be logged', () => emulator.requests.length === 1);
	await emulator.close();
	await ended;
	return Buffer.concat(received).toString();
}

describe('a fault sequence', () => {
	it('gives the next requests its faults in order, `none` leaving one alone, then the rates decide', async () => {
		await faulty({ sequence: ['error', 'none', 'html-error'], rateLimitRate: 1 });
		expectProblem(await api(emulator, 'GET', listPath()), 503);
		expect((await api(emulator, 'GET', listPath())).status).toBe(200);
		expect(emulator.faults.sequence).toEqual(['html-error']);
		expect((await api(emulator, 'GET', listPath())).status).toBe(502);
		expect(emulator.faults.sequence).toEqual([]);
		expectProblem(await api(emulator, 'GET', listPath()), 429);
		expect(faultsSeen()).toEqual(['error', 'none', 'html-error', 'rate-limit']);
	});

	it('applies reply faults to what the service answered, and only where they fit', async () => {
		await faulty({ sequence: ['malformed', 'malformed'] });
		const garbled = await api(emulator, 'POST', jobsPath(), { body: { input: 1 } });
		expect(garbled.status).toBe(201);
		expect(() => garbled.json()).toThrow();
		// An error is not made malformed: the 404 comes whole.
		expectProblem(await api(emulator, 'GET', orgPath(emulator, '/inference-endpoints/nope')), 404);
		expect(faultsSeen()).toEqual(['malformed', 'none']);
		expect(jobs()).toHaveLength(1);
	});

	it('is switched on by setFaults and by --fault-sequence, and refuses kinds it cannot apply', async () => {
		await faulty({});
		emulator.setFaults({ sequence: ['drop'] });
		await expect(api(emulator, 'GET', listPath())).rejects.toThrow();
		expect(() => emulator.setFaults({ sequence: ['interruption' as 'drop'] })).toThrow(
			/sequence\.0 must name request faults or none/,
		);
		expect(optionsOf(readFlags(['--fault-sequence', 'hang,none,stall'])).faults).toMatchObject({
			sequence: ['hang', 'none', 'stall'],
		});
		expect(() => readFlags(['--fault-sequence', 'error,boom'])).toThrow(
			'--fault-sequence must list',
		);
	});
});

describe('faults of the edge', () => {
	it('rate-limit: Retry-After says retryAfterSeconds', async () => {
		await faulty({ rateLimitRate: 1, retryAfterSeconds: 7 });
		const reply = await api(emulator, 'POST', jobsPath(), { body: { input: 1 } });
		expectProblem(reply, 429);
		expect(reply.headers['retry-after']).toBe('7');
		emulator.setFaults({ rateLimitRate: 0 });
		expect(jobs()).toHaveLength(0);
	});

	it('gateway-timeout: a 504 HTML page, and by default the service never gets the request', async () => {
		await faulty({ gatewayTimeoutRate: 1 });
		const reply = await api(emulator, 'POST', jobsPath(), { body: { input: 1 } });
		expect(reply.status).toBe(504);
		expect(reply.headers['content-type']).toMatch(/^text\/html/);
		expect(reply.text).toContain('504 Gateway Time-out');
		expect(jobs()).toHaveLength(0);
		expect(emulator.requests[0]).toMatchObject({ status: 504, fault: 'gateway-timeout' });
	});

	it('drop: the connection closes before any reply; the request and its body are logged', async () => {
		await faulty({ dropRate: 1 });
		await expect(api(emulator, 'POST', jobsPath(), { body: { input: 'dropped' } })).rejects.toThrow(
			/other side closed|socket/i,
		);
		expect(emulator.requests).toEqual([
			expect.objectContaining({
				method: 'POST',
				status: 0,
				fault: 'drop',
				body: '{"input":"dropped"}',
			}),
		]);
		expect(jobs()).toHaveLength(0);
	});

	it('hang: no byte of a reply ever comes, and nothing is done', async () => {
		await faulty({ hangRate: 1 });
		expect(await rawCreate('hung')).toBe('');
		expect(emulator.requests[0]).toMatchObject({ status: 0, fault: 'hang' });
		expect(jobs()).toHaveLength(0);
	});

	it('lateArrivalMs 0: the service has acted before the edge fault is answered', async () => {
		await faulty({ sequence: ['drop', 'html-error'], lateArrivalMs: 0 });
		await expect(api(emulator, 'POST', jobsPath(), { body: { input: 'a' } })).rejects.toThrow();
		expect((await api(emulator, 'POST', jobsPath(), { body: { input: 'b' } })).status).toBe(502);
		expect(jobs().map((job) => job.input)).toEqual(['a', 'b']);
	});

	it('lateArrivalMs n: the request reaches the service n ms later on the emulator clock', async () => {
		const clock = new ManualClock();
		await faulty({ gatewayTimeoutRate: 1, lateArrivalMs: 300 }, clock);
		const reply = await api(emulator, 'POST', jobsPath(), { body: { input: 'late' } });
		expect(reply.status).toBe(504);
		expect(clock.pendingTimers).toBe(1);
		await clock.advance(299);
		expect(jobs()).toHaveLength(0);
		await clock.advance(1);
		expect(jobs().map((job) => job.input)).toEqual(['late']);
		emulator.setFaults({ gatewayTimeoutRate: 0 });
		const listed = jobPageSchema.parse((await api(emulator, 'GET', jobsPath())).json());
		expect(listed.items.map((job) => job.input)).toEqual(['late']);
	});
});

describe('spoiled replies', () => {
	it('stall: the request is processed, the status line and half the body go out, then nothing', async () => {
		// A manual clock holds the job still, so the reply can be compared with it afterwards.
		await faulty({ stallRate: 1 }, new ManualClock());
		const received = await rawCreate('stalled');
		const [head, body = ''] = received.split('\r\n\r\n');
		expect(head).toMatch(/^HTTP\/1\.1 201 Created/);
		const promised = Number(/content-length: (\d+)/i.exec(head ?? '')?.[1]);
		const job = jobs()[0];
		expect(promised).toBe(Buffer.byteLength(JSON.stringify(job)));
		expect(body).toBe(JSON.stringify(job).slice(0, Math.floor(promised / 2)));
		expect(emulator.requests[0]).toMatchObject({ status: 201, fault: 'stall' });
	});

	it('stream-cut: a chat stream stops part-way and ends with neither an error nor [DONE]', async () => {
		await faulty({ surfaces: ['chat'], streamCutRate: 1 });
		const reply = await call(`${emulator.chatUrl}/v1/chat/completions`, 'POST', null, {
			body: { messages: [{ role: 'user', content: 'Tell me about GPUs please' }], stream: true },
		});
		expect(reply.status).toBe(200);
		const events = reply.text.split('\n\n').filter((event) => event.startsWith('data: '));
		expect(events.length).toBeGreaterThan(1);
		expect(reply.text).not.toContain('[DONE]');
		expect(reply.text).not.toContain('"error"');
		expect(events.every((event) => !/"finish_reason":"(stop|length)"/.test(event))).toBe(true);
		expect(emulator.requests[0]).toMatchObject({ fault: 'stream-cut' });
	});
});

describe('the command line', () => {
	it('maps the new fault flags and prints them only while a fault is on', async () => {
		const flags = readFlags([
			'--port',
			'0',
			'--drop-rate',
			'0.5',
			'--hang-rate',
			'0.1',
			'--gateway-timeout-rate',
			'0.2',
			'--stall-rate',
			'0.3',
			'--stream-cut-rate',
			'0.4',
			'--retry-after',
			'30',
			'--late-arrival-ms',
			'250',
		]);
		expect(optionsOf(flags).faults).toMatchObject({
			dropRate: 0.5,
			hangRate: 0.1,
			gatewayTimeoutRate: 0.2,
			stallRate: 0.3,
			streamCutRate: 0.4,
			retryAfterSeconds: 30,
			lateArrivalMs: 250,
		});
		for (const flag of ['--drop-rate', '--hang-rate', '--late-arrival-ms', '--fault-sequence'])
			expect(USAGE).toContain(flag);
		emulator = await emulatorFor({ ...optionsOf(flags), log: undefined });
		expect(banner(emulator)).toContain(
			'Faults: gatewayTimeoutRate=0.2 dropRate=0.5 hangRate=0.1 stallRate=0.3 streamCutRate=0.4 retryAfterSeconds=30 lateArrivalMs=250 on management',
		);
		emulator.setFaults({
			dropRate: 0,
			hangRate: 0,
			gatewayTimeoutRate: 0,
			stallRate: 0,
			streamCutRate: 0,
		});
		expect(banner(emulator)).toContain('Faults: none');
	});
});
