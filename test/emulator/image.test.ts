import sharp from 'sharp';
import {
	imageAcceptedSchema,
	imageResultSchema,
	imageWebhookPayloadSchema,
	legacyImageWebhookPayloadSchema,
	workloadErrorBodySchema,
	type PromptGraph,
} from '../../shared/schemas';
import { verifyWebhook } from '../../shared/webhooks';
import type { RunningEmulator } from '../../emulator';
import { call, emulatorFor, startReceiver, waitFor } from './helpers';

let emulator: RunningEmulator;
beforeAll(async () => {
	emulator = await emulatorFor();
});
afterAll(() => emulator.close());

function graph(
	options: {
		text?: string;
		seed?: number;
		width?: number;
		height?: number;
		batch?: number;
		latent?: boolean;
		save?: boolean;
	} = {},
): PromptGraph {
	const nodes: PromptGraph = {
		'3': {
			inputs: {
				seed: options.seed ?? 42,
				steps: 20,
				cfg: 7,
				sampler_name: 'euler',
				scheduler: 'normal',
				denoise: 1,
				model: ['4', 0],
				positive: ['6', 0],
				negative: ['7', 0],
				latent_image: ['5', 0],
			},
			class_type: 'KSampler',
		},
		'4': { inputs: { ckpt_name: 'model.safetensors' }, class_type: 'CheckpointLoaderSimple' },
		'5': {
			inputs: {
				width: options.width ?? 320,
				height: options.height ?? 256,
				batch_size: options.batch ?? 1,
			},
			class_type: 'EmptyLatentImage',
		},
		'6': {
			inputs: { text: options.text ?? 'a lighthouse at dusk', clip: ['4', 1] },
			class_type: 'CLIPTextEncode',
			_meta: { title: 'Positive' },
		},
		'7': {
			inputs: { text: 'blurry', clip: ['4', 1] },
			class_type: 'CLIPTextEncode',
			_meta: { title: 'Negative' },
		},
		'8': { inputs: { samples: ['3', 0], vae: ['4', 2] }, class_type: 'VAEDecode' },
		'9': { inputs: { filename_prefix: 'lighthouse', images: ['8', 0] }, class_type: 'SaveImage' },
	};
	if (options.latent === false) {
		delete nodes['5'];
		delete nodes['3']?.inputs.latent_image;
	}
	if (options.save === false) delete nodes['9'];
	return nodes;
}

const post = (path: string, body: unknown) =>
	call(`${emulator.imageUrl}${path}`, 'POST', null, { body });

async function decode(base64: string) {
	return sharp(Buffer.from(base64, 'base64')).metadata();
}

describe('image workload: health', () => {
	it('answers /health and /ready', async () => {
		const health = await call(`${emulator.imageUrl}/health`, 'GET', null);
		expect(health.status).toBe(200);
		expect(health.json()).toEqual({ version: expect.any(String), status: 'healthy' });
		expect((await call(`${emulator.imageUrl}/ready`, 'GET', null)).status).toBe(200);
	});
});

describe('POST /prompt', () => {
	it('returns the request plus id, decodable PNG images of the latent size, filenames and stats', async () => {
		const prompt = graph({ width: 320, height: 256, batch: 2 });
		const reply = await post('/prompt', { prompt, id: 'req-1' });
		expect(reply.status).toBe(200);
		const result = imageResultSchema.parse(reply.json());
		expect(result.id).toBe('req-1');
		expect(reply.json()).toEqual(expect.objectContaining({ prompt }));
		expect(result.images).toHaveLength(2);
		expect(result.filenames).toEqual(['lighthouse_00001_.png', 'lighthouse_00002_.png']);
		expect(result.stats).toEqual(expect.objectContaining({ total_time: expect.any(Number) }));
		for (const image of result.images)
			expect(await decode(image)).toEqual(
				expect.objectContaining({ format: 'png', width: 320, height: 256 }),
			);
		expect(result.images[0]).not.toBe(result.images[1]);
	});

	it('generates an id when none is given and uses 512x512 when the graph has no latent size', async () => {
		const result = imageResultSchema.parse(
			(await post('/prompt', { prompt: graph({ latent: false }) })).json(),
		);
		expect(result.id).toMatch(/^[0-9a-f-]{36}$/);
		expect(await decode(result.images[0] ?? '')).toEqual(
			expect.objectContaining({ width: 512, height: 512 }),
		);
	});

	it('is deterministic for prompt and seed, and differs across prompts and seeds', async () => {
		const image = async (text: string, seed: number) =>
			imageResultSchema.parse((await post('/prompt', { prompt: graph({ text, seed }) })).json())
				.images[0];
		const a = await image('a red fox', 1);
		expect(await image('a red fox', 1)).toBe(a);
		expect(await image('a blue whale', 1)).not.toBe(a);
		expect(await image('a red fox', 2)).not.toBe(a);
	});

	it.each([
		[{ format: 'jpeg', options: { quality: 80, progressive: true } }, 'jpeg', 'jpg'],
		[{ format: 'jpg' }, 'jpeg', 'jpg'],
		[{ format: 'webp', options: { quality: 70 } }, 'webp', 'webp'],
	])('converts output as asked (%j)', async (convert, format, extension) => {
		const result = imageResultSchema.parse(
			(await post('/prompt', { prompt: graph(), convert_output: convert })).json(),
		);
		expect(await decode(result.images[0] ?? '')).toEqual(
			expect.objectContaining({ format, width: 320, height: 256 }),
		);
		expect(result.filenames?.[0]).toMatch(new RegExp(`\\.${extension}$`));
	});

	it('refuses a graph without a save-image node: 400 {error, location: prompt}', async () => {
		const reply = await post('/prompt', { prompt: graph({ save: false }) });
		expect(reply.status).toBe(400);
		const body = workloadErrorBodySchema.parse(reply.json());
		expect(body.location).toBe('prompt');
		expect(String(body.error)).toContain('filename_prefix');
	});

	it.each([
		[{ prompt: graph({ width: 100 }) }, 400, 'prompt', 'width'],
		[{ prompt: graph({ batch: 17 }) }, 400, 'prompt', 'batch_size'],
		[{ prompt: {} }, 400, 'prompt', 'at least one node'],
		[
			{ prompt: { ...graph(), '8': { inputs: { samples: ['99', 0] }, class_type: 'VAEDecode' } } },
			400,
			'prompt',
			'links to node "99"',
		],
		[{ prompt: graph(), convert_output: { format: 'gif' } }, 422, 'convert_output.format', 'jpeg'],
		[{ prompt: graph(), webhook_v2: 'not a url' }, 422, 'webhook_v2', 'URL'],
		[{ prompt: graph(), extra: 1 }, 422, 'body', 'extra'],
	])('refuses invalid request %# with {error, location}', async (body, status, location, words) => {
		const reply = await post('/prompt', body);
		expect(reply.status).toBe(status);
		const parsed = workloadErrorBodySchema.parse(reply.json());
		expect(parsed.location).toBe(location);
		expect(String(parsed.error)).toContain(words);
	});

	it('refuses a body that is not JSON with 400 {error, location: body}', async () => {
		const reply = await call(`${emulator.imageUrl}/prompt`, 'POST', null, { raw: '{"prompt": ' });
		expect(reply.status).toBe(400);
		expect(workloadErrorBodySchema.parse(reply.json()).location).toBe('body');
	});

	it('fails a generation that does not fit the GPU with 500 {error}', async () => {
		const reply = await post('/prompt', { prompt: graph({ width: 2048, height: 2048, batch: 5 }) });
		expect(reply.status).toBe(500);
		expect(String(workloadErrorBodySchema.parse(reply.json()).error)).toContain(
			'out of GPU memory',
		);
	});
});

describe('POST /workflow/<name>', () => {
	it.each(['txt2img', 'text2img'])(
		'%s turns a plain prompt into an image of the requested size',
		async (name) => {
			const reply = await post(`/workflow/${name}`, {
				input: { prompt: 'a cosy cabin in the snow', width: 384, height: 256, seed: 7, steps: 10 },
			});
			expect(reply.status).toBe(200);
			const result = imageResultSchema.parse(reply.json());
			expect(reply.json()).toEqual(
				expect.objectContaining({
					input: expect.objectContaining({ prompt: 'a cosy cabin in the snow' }),
					prompt: expect.any(Object),
				}),
			);
			expect(await decode(result.images[0] ?? '')).toEqual(
				expect.objectContaining({ format: 'png', width: 384, height: 256 }),
			);
		},
	);

	it('defaults to 512x512 and is deterministic for prompt and seed', async () => {
		const one = imageResultSchema.parse(
			(await post('/workflow/txt2img', { input: { prompt: 'moon', seed: 3 } })).json(),
		);
		const two = imageResultSchema.parse(
			(await post('/workflow/txt2img', { input: { prompt: 'moon', seed: 3 } })).json(),
		);
		expect(one.images[0]).toBe(two.images[0]);
		expect(await decode(one.images[0] ?? '')).toEqual(
			expect.objectContaining({ width: 512, height: 512 }),
		);
	});

	it('answers an unknown workflow with 404 {error}', async () => {
		const reply = await post('/workflow/img2vid', { input: { prompt: 'x' } });
		expect(reply.status).toBe(404);
		expect(String(workloadErrorBodySchema.parse(reply.json()).error)).toContain('txt2img');
	});

	it.each([
		[{ input: { prompt: 'x', width: 255 } }, 'input.width', '256-2048'],
		[{ input: { prompt: 'x', height: 2049 } }, 'input.height', '256-2048'],
		[{ input: { prompt: '   ' } }, 'input.prompt', 'must not be empty'],
		[{ input: { width: 512 } }, 'input.prompt', 'is required'],
		[{ input: { prompt: 'x', steps: 0 } }, 'input.steps', '1-150'],
		[{}, 'input', 'is required'],
	])('refuses invalid input %# with 422 {error, location}', async (body, location, words) => {
		const reply = await post('/workflow/txt2img', body);
		expect(reply.status).toBe(422);
		const parsed = workloadErrorBodySchema.parse(reply.json());
		expect(parsed.location).toBe(location);
		expect(String(parsed.error)).toContain(words);
	});

	it('accepts the size bounds 256 and 2048', async () => {
		const reply = await post('/workflow/txt2img', {
			input: { prompt: 'bounds', width: 256, height: 2048 },
		});
		expect(reply.status).toBe(200);
		expect(await decode(imageResultSchema.parse(reply.json()).images[0] ?? '')).toEqual(
			expect.objectContaining({ width: 256, height: 2048 }),
		);
	});
});

describe('image webhooks', () => {
	it('webhook_v2: 202 at once, then a signed prompt.complete delivery with the images', async () => {
		const receiver = await startReceiver();
		try {
			const reply = await post('/workflow/txt2img', {
				input: { prompt: 'async', width: 256, height: 256 },
				id: 'async-1',
				webhook_v2: receiver.url,
			});
			expect(reply.status).toBe(202);
			expect(imageAcceptedSchema.parse(reply.json())).toEqual(
				expect.objectContaining({ id: 'async-1', status: 'ok', webhook_v2: receiver.url }),
			);
			await waitFor(() => receiver.received.length === 1, 'the delivery');
			const [delivery] = receiver.received;
			if (!delivery) throw new Error('no delivery');
			expect(
				verifyWebhook(emulator.webhookSecret, delivery.headers, delivery.body, {
					nowSeconds: Date.now() / 1000,
				}).id,
			).toBe('async-1');
			const payload = imageWebhookPayloadSchema.parse(JSON.parse(delivery.body));
			if (payload.type !== 'prompt.complete') throw new Error(`unexpected ${payload.type}`);
			expect(payload.id).toBe('async-1');
			expect(await decode(payload.images[0] ?? '')).toEqual(
				expect.objectContaining({ width: 256, height: 256 }),
			);
		} finally {
			await receiver.close();
		}
	});

	it('webhook_v2: a failed generation is delivered as prompt.failed', async () => {
		const receiver = await startReceiver();
		try {
			const reply = await post('/prompt', {
				prompt: graph({ width: 2048, height: 2048, batch: 5 }),
				webhook_v2: receiver.url,
			});
			expect(reply.status).toBe(202);
			await waitFor(() => receiver.received.length === 1, 'the delivery');
			const payload = imageWebhookPayloadSchema.parse(
				JSON.parse(receiver.received[0]?.body ?? '{}'),
			);
			expect(payload.type).toBe('prompt.failed');
			expect(String(payload.error)).toContain('out of GPU memory');
		} finally {
			await receiver.close();
		}
	});

	it('legacy webhook: one unsigned output.complete POST per image', async () => {
		const receiver = await startReceiver();
		try {
			const reply = await post('/prompt', {
				prompt: graph({ batch: 2 }),
				id: 'legacy-1',
				webhook: receiver.url,
			});
			expect(reply.status).toBe(202);
			await waitFor(() => receiver.received.length === 2, 'two deliveries');
			const payloads = receiver.received.map((d) =>
				legacyImageWebhookPayloadSchema.parse(JSON.parse(d.body)),
			);
			expect(payloads.map((p) => p.filename).sort()).toEqual([
				'lighthouse_00001_.png',
				'lighthouse_00002_.png',
			]);
			expect(payloads.every((p) => p.id === 'legacy-1')).toBe(true);
			expect(receiver.received.every((d) => d.headers['webhook-signature'] === undefined)).toBe(
				true,
			);
			expect(await decode(payloads[0]?.image ?? '')).toEqual(
				expect.objectContaining({ format: 'png' }),
			);
		} finally {
			await receiver.close();
		}
	});
});
