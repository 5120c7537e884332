import {
	inferenceEndpointPageSchema,
	inferenceEndpointSchema,
	webhookSecretKeySchema,
	LIMITS,
} from '../../shared/schemas';
import { readSchemaForm, type SchemaForm } from '../../shared/input-schema';
import { VOICE_COUNT, WIDE_FORM_FIELDS } from '../../emulator/endpoints/form-shapes';
import { DEV_API_KEY, DEV_WEBHOOK_SECRET, type RunningEmulator } from '../../emulator';
import { api, call, emulatorFor, expectProblem, orgPath } from './helpers';

let emulator: RunningEmulator;
beforeAll(async () => {
	emulator = await emulatorFor();
});
afterAll(() => emulator.close());

const list = (query = '') =>
	api(emulator, 'GET', orgPath(emulator, `/inference-endpoints${query}`));

describe('catalogue of inference endpoints', () => {
	it('has a dozen or more realistic endpoints, transcribe among them, each valid per the published schema', async () => {
		const reply = await list('?page_size=100');
		expect(reply.status).toBe(200);
		expect(reply.headers['content-type']).toBe('application/json');
		const page = inferenceEndpointPageSchema.parse(reply.json());
		expect(page.total_size).toBeGreaterThanOrEqual(12);
		expect(page.items).toHaveLength(page.total_size);
		expect(page.items.map((item) => item.name)).toContain('transcribe');
		for (const item of page.items) {
			inferenceEndpointSchema.parse(item);
			expect(item.organization_name).toBe(emulator.organization);
			// One endpoint publishes prose where its schema should be, as real catalogues sometimes do.
			if (item.name !== 'legacy-ocr')
				expect(() => JSON.parse(item.input_schema) as unknown).not.toThrow();
			expect(() => JSON.parse(item.output_schema) as unknown).not.toThrow();
			expect(Object.keys(item).sort()).toEqual([
				'description',
				'display_name',
				'icon_url',
				'id',
				'input_schema',
				'name',
				'organization_name',
				'output_schema',
				'price_description',
				'readme',
			]);
		}
		expect(new Set(page.items.map((item) => item.id)).size).toBe(page.items.length);
	});

	it('pages with page_size 7 into three pages of distinct items, and past the end is empty', async () => {
		const pages = await Promise.all(
			[1, 2, 3, 4].map(async (n) =>
				inferenceEndpointPageSchema.parse((await list(`?page=${n}&page_size=7`)).json()),
			),
		);
		expect(pages.map((page) => page.items.length)).toEqual([7, 7, pages[0].total_size - 14, 0]);
		expect(pages.map((page) => page.page)).toEqual([1, 2, 3, 4]);
		expect(
			pages.every((page) => page.page_size === 7 && page.total_size === pages[0].total_size),
		).toBe(true);
		const names = pages.flatMap((page) => page.items.map((item) => item.name));
		expect(new Set(names).size).toBe(pages[0].total_size);
	});

	it('defaults to the first page when no query is given', async () => {
		const page = inferenceEndpointPageSchema.parse((await list()).json());
		expect(page.page).toBe(1);
		expect(page.items.length).toBe(Math.min(page.page_size, page.total_size));
	});

	it.each([
		['page=1', 200],
		['page=2147483647', 200],
		['page_size=1', 200],
		['page_size=100', 200],
	])('accepts the bound %s', async (query, status) => {
		const reply = await list(`?${query}`);
		expect(reply.status).toBe(status);
		inferenceEndpointPageSchema.parse(reply.json());
	});

	it('answers page 2147483647 with no items but the true total', async () => {
		const page = inferenceEndpointPageSchema.parse(
			(await list(`?page=${LIMITS.pageMax}&page_size=100`)).json(),
		);
		expect(page).toEqual(
			expect.objectContaining({ items: [], page: LIMITS.pageMax, page_size: 100 }),
		);
		expect(page.total_size).toBeGreaterThan(0);
	});

	it.each([
		['page=0', 'page', 'between 1 and 2147483647'],
		['page=2147483648', 'page', 'between 1 and 2147483647'],
		['page=-1', 'page', 'between 1 and 2147483647'],
		['page=abc', 'page', 'whole number'],
		['page=1.5', 'page', 'whole number'],
		['page_size=0', 'page_size', 'between 1 and 100'],
		['page_size=101', 'page_size', 'between 1 and 100'],
	])('refuses %s with a 400 problem naming the field and the rule', async (query, field, rule) => {
		const reply = await list(`?${query}`);
		const problem = expectProblem(
			reply,
			400,
			`/api/public${orgPath(emulator, '/inference-endpoints')}`,
		);
		expect(problem.detail).toContain(field);
		expect(problem.detail).toContain(rule);
	});

	it('returns one endpoint by name, the same item as in the listing', async () => {
		const reply = await api(emulator, 'GET', orgPath(emulator, '/inference-endpoints/transcribe'));
		expect(reply.status).toBe(200);
		const item = inferenceEndpointSchema.parse(reply.json());
		const listed = inferenceEndpointPageSchema
			.parse((await list('?page_size=100')).json())
			.items.find((entry) => entry.name === 'transcribe');
		expect(item).toEqual(listed);
		expect(JSON.parse(item.input_schema)).toEqual(
			expect.objectContaining({
				type: 'object',
				properties: expect.objectContaining({ url: expect.any(Object) }),
			}),
		);
	});

	it('publishes the schema shapes a form must read: $refs, 300 properties, a 500-value enum, prose', async () => {
		const forms = new Map<string, SchemaForm>();
		for (const name of ['product-listing', 'survey-intake', 'voice-over', 'legacy-ocr']) {
			const reply = await api(emulator, 'GET', orgPath(emulator, `/inference-endpoints/${name}`));
			const item = inferenceEndpointSchema.parse(reply.json());
			forms.set(name, readSchemaForm(item.input_schema));
		}
		expect(forms.get('product-listing')).toMatchObject({ kind: 'fields' });
		const wide = forms.get('survey-intake');
		expect(wide?.kind === 'fields' && wide.fields).toHaveLength(WIDE_FORM_FIELDS);
		const voice = forms.get('voice-over');
		expect(voice?.kind === 'fields' && voice.fields[1].options).toHaveLength(VOICE_COUNT);
		expect(forms.get('legacy-ocr')).toMatchObject({ kind: 'json' });
	});

	it('answers an unknown endpoint with a 404 problem', async () => {
		const problem = expectProblem(
			await api(emulator, 'GET', orgPath(emulator, '/inference-endpoints/no-such-thing')),
			404,
		);
		expect(problem.detail).toContain('no-such-thing');
	});

	it('exposes the catalogue and the named test endpoints programmatically', () => {
		expect(emulator.endpoints.map((item) => item.name)).toEqual(
			expect.arrayContaining([emulator.genericEndpoint, emulator.slowEndpoint, 'transcribe']),
		);
	});
});

describe('other management paths', () => {
	it('returns the organization webhook secret', async () => {
		const reply = await api(emulator, 'GET', orgPath(emulator, '/webhook-secret-key'));
		expect(reply.status).toBe(200);
		expect(webhookSecretKeySchema.parse(reply.json())).toEqual({ secret_key: DEV_WEBHOOK_SECRET });
		expect(emulator.apiKey).toBe(DEV_API_KEY);
	});

	it('answers an unknown path with a 404 problem and a wrong method with 405 and Allow', async () => {
		expectProblem(await api(emulator, 'GET', orgPath(emulator, '/no-such-collection')), 404);
		expectProblem(await api(emulator, 'GET', '/nothing-here'), 404);
		const wrongMethod = await api(emulator, 'DELETE', orgPath(emulator, '/inference-endpoints'));
		expectProblem(wrongMethod, 405);
		expect(wrongMethod.headers.allow).toBe('GET');
	});

	it('serves an index of its URLs at the root', async () => {
		const reply = await call(`${emulator.origin}/`, 'GET', null);
		expect(reply.status).toBe(200);
		expect(reply.json()).toEqual({
			management: emulator.baseUrl,
			image_workload: emulator.imageUrl,
			chat_workload: emulator.chatUrl,
		});
	});
});
