import { queueSchema } from '../../shared/schemas';
import type { RunningEmulator } from '../../emulator';
import { api, emulatorFor, expectProblem, orgPath } from './helpers';

let emulator: RunningEmulator;
beforeAll(async () => {
	emulator = await emulatorFor();
});
afterAll(() => emulator.close());

const createQueue = (body: unknown) =>
	api(emulator, 'POST', orgPath(emulator, `/projects/${emulator.project}/queues`), { body });

describe('create queue', () => {
	it('creates a queue: 201, the queue object, display_name defaulting to the name', async () => {
		const reply = await createQueue({ name: 'transcripts' });
		expect(reply.status).toBe(201);
		const queue = queueSchema.parse(reply.json());
		expect(queue).toEqual(
			expect.objectContaining({
				name: 'transcripts',
				display_name: 'transcripts',
				container_groups: [],
				current_queue_length: 0,
			}),
		);
		expect(queue.create_time).toBe(queue.update_time);
		expect(reply.json()).not.toHaveProperty('description');
	});

	it('keeps a given display_name and description', async () => {
		const queue = queueSchema.parse(
			(
				await createQueue({
					name: 'nightly',
					display_name: 'Nightly batch',
					description: 'Runs at night.',
				})
			).json(),
		);
		expect(queue).toEqual(
			expect.objectContaining({ display_name: 'Nightly batch', description: 'Runs at night.' }),
		);
	});

	it('refuses a second queue of the same name in the project with a 409 problem', async () => {
		expect((await createQueue({ name: 'twice' })).status).toBe(201);
		const problem = expectProblem(await createQueue({ name: 'twice' }), 409);
		expect(problem.detail).toContain('twice');
	});

	it.each([
		['ab', 201],
		[`a${'b'.repeat(62)}`, 201],
		['a', 400],
		[`a${'b'.repeat(63)}`, 400],
		['Upper', 400],
		['1starts-with-digit', 400],
		['ends-with-hyphen-', 400],
		['has_underscore', 400],
	])('name %p -> %i', async (name, status) => {
		const reply = await createQueue({ name });
		if (status === 201) {
			expect(reply.status).toBe(201);
			return;
		}
		expect(expectProblem(reply, 400).detail).toMatch(/^name .*must be 2-63 lower-case letters/);
	});

	it.each([
		[{ description: 'd'.repeat(500) }, 201, ''],
		[{ description: 'd'.repeat(501) }, 400, 'description'],
		[{ display_name: 'ab' }, 201, ''],
		[{ display_name: 'x'.repeat(63) }, 201, ''],
		[{ display_name: 'x' }, 400, 'display_name'],
		[{ display_name: 'x'.repeat(64) }, 400, 'display_name'],
		[{ unknown_field: 1 }, 400, 'unknown_field'],
	])('field bounds %#', async (extra, status, field) => {
		const reply = await createQueue({
			name: `bounds-${status}-${Math.random().toString(36).slice(2, 8)}`,
			...extra,
		});
		if (status === 201) {
			expect(reply.status).toBe(201);
			return;
		}
		expect(expectProblem(reply, 400).detail).toContain(field);
	});

	it('refuses a missing name and a body that is not JSON', async () => {
		expect(expectProblem(await createQueue({}), 400).detail).toBe('name is required');
		const raw = await api(
			emulator,
			'POST',
			orgPath(emulator, `/projects/${emulator.project}/queues`),
			{ raw: '{"name": ' },
		);
		expect(expectProblem(raw, 400).detail).toMatch(/not valid JSON/);
	});
});
