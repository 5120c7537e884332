import { randomBytes } from 'node:crypto';
import { startEmulator } from '../../emulator';
import { WorkloadClient } from '../../shared/client';
import { ResponseFormatError, TimeoutError } from '../../shared/errors';
import { readImageReply } from '../../shared/image-reply';
import { replyChecks } from '../../shared/request';
import { systemClock, UndiciTransport } from '../../shared/runtime';
import type { Transport } from '../../shared/transport';
import { useEmulator } from '../support/emulator';
import { FakeClock } from '../support/fake-clock';

const checks = replyChecks(
	'GPU Cloud workload',
	{ method: 'POST', path: '/workflow/txt2img' },
	200,
);

async function* pieces(text: string, cut: number[]): AsyncIterable<Uint8Array> {
	const bytes = Buffer.from(text);
	let from = 0;
	for (const at of [...cut, bytes.length]) {
		yield bytes.subarray(from, at);
		from = at;
	}
}

const first = randomBytes(301);
const second = randomBytes(64);
// As some JSON encoders write it: slashes escaped, spaces around the structure, unknown fields.
const reply = ` { "id" : "p-1", "stats": {"images": ["not an image"], "ms": 12},\n "images" : [ "${first.toString('base64').replaceAll('/', '\\/')}" , "${second.toString('base64')}" ], "filenames": ["a.png", "b.png"] } `;

describe('reading an image reply as it arrives', () => {
	it('decodes every image the same wherever the chunks are cut', async () => {
		for (let at = 0; at <= Buffer.byteLength(reply); at++) {
			const result = await readImageReply(
				pieces(reply, [at, Math.min(at + 3, Buffer.byteLength(reply))]),
				undefined,
				checks,
			);
			expect(result.images.map((image) => image.toString('hex'))).toEqual([
				first.toString('hex'),
				second.toString('hex'),
			]);
			expect(result).toMatchObject({ id: 'p-1', filenames: ['a.png', 'b.png'], stats: { ms: 12 } });
		}
	});

	it('grows past a size hint that was too small (a compressed reply) and keeps earlier images intact', async () => {
		const result = await readImageReply(pieces(reply, [40, 200, 420]), 10, checks);
		expect(result.images[0].equals(first)).toBe(true);
		expect(result.images[1].equals(second)).toBe(true);
	});

	it.each([
		['an image that is not base64', '{"id":"x","images":["ab$d"]}', /not base64/],
		['an escape that cannot be base64', '{"id":"x","images":["ab\\ncd"]}', /not base64/],
		['padding in the middle', '{"id":"x","images":["ab==cd"]}', /padding in the middle/],
		['an image cut short', '{"id":"x","images":["abcde"]}', /cut short/],
		['an empty image', '{"id":"x","images":[""]}', /empty image/],
		['a reply cut off', '{"id":"x","images":["abcd', /cut off/],
		['no id', '{"images":["abcd"]}', /id/],
		['no images', '{"id":"x","images":[]}', /images/],
		['images that are not strings', '{"id":"x","images":[12]}', /images/],
		['images that are not a list', '{"id":"x","images":"abcd"}', /images/],
	])('refuses %s', async (_name, text, message) => {
		await expect(readImageReply(pieces(text, [5]), undefined, checks)).rejects.toThrow(message);
	});
});

describe('generating images over loopback HTTP', () => {
	let emulator: Awaited<ReturnType<typeof startEmulator>>;
	const transport = new UndiciTransport();
	beforeAll(async () => {
		emulator = await startEmulator({ port: 0 });
	});
	afterAll(async () => {
		await transport.close();
		await emulator.close();
	});

	const source = {
		kind: 'text' as const,
		workflow: 'txt2img',
		request: { input: { prompt: 'a red fox', width: 1024, height: 768, seed: 3 } },
	};

	it('streams and decodes the same bytes as reading the whole reply', async () => {
		const streaming = new WorkloadClient({
			serviceUrl: emulator.imageUrl,
			transport,
			clock: systemClock,
		});
		// Without stream(), the client reads the reply whole and decodes it after.
		const whole: Transport = { send: (request) => transport.send(request) };
		const reading = new WorkloadClient({
			serviceUrl: emulator.imageUrl,
			transport: whole,
			clock: systemClock,
		});
		const [streamed, read] = await Promise.all([
			streaming.images.generate(source),
			reading.images.generate(source),
		]);
		expect(streamed.images).toHaveLength(1);
		expect(streamed.images[0].equals(read.images[0])).toBe(true);
		expect(streamed.images[0].subarray(1, 4).toString()).toBe('PNG');
		expect(streamed.filenames).toEqual(read.filenames);
	});

	describe('a reply that breaks', () => {
		const setup = useEmulator();
		const client = (timeoutMs?: number) =>
			new WorkloadClient({
				serviceUrl: setup.emulator.imageUrl,
				transport: setup.transport,
				clock: new FakeClock(),
				...(timeoutMs ? { timeoutMs } : {}),
			});

		it('reports a malformed reply with the request it answered', async () => {
			setup.emulator.setFaults({ surfaces: ['image'], sequence: ['malformed'] });
			const error = await client()
				.images.generate(source)
				.catch((e: unknown) => e);
			expect(error).toBeInstanceOf(ResponseFormatError);
			expect((error as Error).message).toBe(
				'GPU Cloud workload sent a reply to POST /workflow/txt2img that was cut off (HTTP 200).',
			);
			expect(setup.emulator.requests.map((r) => r.fault)).toEqual(['malformed']);
		});

		it('reports a reply that stops arriving as a timeout, without asking again', async () => {
			setup.emulator.setFaults({ surfaces: ['image'], sequence: ['stall'] });
			const error = await client(300)
				.images.generate(source)
				.catch((e: unknown) => e);
			expect(error).toBeInstanceOf(TimeoutError);
			expect((error as Error).message).toBe(
				'GPU Cloud workload did not answer POST /workflow/txt2img within 300 ms.',
			);
			expect(setup.emulator.requests).toEqual([
				expect.objectContaining({ method: 'POST', status: 200, fault: 'stall' }),
			]);
		});
	});
});
