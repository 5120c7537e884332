import {
	TOOL_ANSWER_MAX_BYTES,
	TOOL_JOB_OUTPUT_MAX_BYTES,
	answerBytes,
	catalogueAnswer,
	endpointAnswer,
	jobAnswer,
	jobListAnswer,
	inferenceEndpointSchema,
	jobSchema,
	summarizeInputSchema,
	utf8Bytes,
	type InferenceEndpoint,
	type Job,
} from '../../shared';
import { generatedEndpoints } from '../support/catalogue';

/** Parsed with the shared schema, as the client hands endpoints to the node and the Slack app. */
function catalogue(count: number): InferenceEndpoint[] {
	return generatedEndpoints(count).map((endpoint) =>
		inferenceEndpointSchema.parse({ ...endpoint, organization_name: 'acme' }),
	);
}

function job(output: unknown): Job {
	return jobSchema.parse({
		id: '3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b',
		inference_endpoint_name: 'echo',
		organization_name: 'acme',
		input: { text: 'x' },
		status: 'succeeded',
		events: [
			{ action: 'created', time: '2026-11-28T10:00:00.000Z' },
			{ action: 'started', time: '2026-11-28T10:00:01.000Z' },
			{ action: 'succeeded', time: '2026-11-28T10:00:03.250Z' },
		],
		create_time: '2026-11-28T10:00:00.000Z',
		update_time: '2026-11-28T10:00:03.250Z',
		output,
	});
}

describe('catalogueAnswer', () => {
	test.each([1, 14, 500])('keeps a catalogue of %i endpoints within the budget', (count) => {
		const answer = catalogueAnswer(catalogue(count));
		expect(answerBytes(answer)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
		expect(answer.total).toBe(count);
		expect([
			...answer.endpoints.map((entry) => entry.name),
			...(answer.otherEndpoints ?? []),
		]).toEqual(catalogue(count).map((endpoint) => endpoint.name));
	});

	test('details every endpoint of a small catalogue: name, display name, one line, price, input', () => {
		const [entry] = catalogueAnswer(catalogue(1)).endpoints;
		expect(entry).toEqual({
			name: 'translate-model-0',
			displayName: 'Translate model 0',
			description: expect.stringMatching(/^Runs the translate model/),
			price: '$0.010 per 1,000 characters',
			input: 'text (string, required), option_1 (integer)',
		});
	});

	test('details as many endpoints of a large catalogue as fit, and names the rest', () => {
		const answer = catalogueAnswer(catalogue(500));
		expect(answer.endpoints.length).toBeGreaterThan(10);
		expect(answer.otherEndpoints).toHaveLength(500 - answer.endpoints.length);
		// The budget is used, not wasted: what is left is less than one more endpoint in detail.
		const next = catalogueAnswer(catalogue(500)).endpoints.length;
		expect(TOOL_ANSWER_MAX_BYTES - answerBytes(answer)).toBeLessThan(
			utf8Bytes(JSON.stringify(catalogueAnswer(catalogue(next + 1)).endpoints[next])),
		);
	});

	test('counts the endpoints whose names do not fit either', () => {
		const long = catalogue(500).map((endpoint, n) => ({
			...endpoint,
			name: `a-very-long-endpoint-name-that-uses-most-of-its-63-characters-${String(n).padStart(3, '0')}`.slice(
				-63,
			),
		}));
		const answer = catalogueAnswer(long);
		expect(answerBytes(answer)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
		expect(answer.endpoints).toHaveLength(0);
		const unlisted = 500 - (answer.otherEndpoints?.length ?? 0);
		expect(unlisted).toBeGreaterThan(0);
		expect(answer.note).toContain(`${unlisted} more not listed`);
	});
});

describe('summarizeInputSchema', () => {
	test('puts required fields first and counts the fields past the limit', () => {
		const schema = {
			type: 'object',
			required: ['z'],
			properties: Object.fromEntries(
				['a', 'b', 'c', 'd', 'e', 'z'].map((name) => [name, { type: 'string' }]),
			),
		};
		expect(summarizeInputSchema(schema, 200)).toBe(
			'z (string, required), a (string), b (string), c (string), d (string), e (string)',
		);
		expect(summarizeInputSchema(schema, 50)).toBe(
			'z (string, required), a (string), +4 more fields',
		);
	});
});

describe('endpointAnswer', () => {
	test('gives an endpoint whole, its schemas as JSON, when it fits', () => {
		const [endpoint] = catalogue(1);
		const answer = endpointAnswer(endpoint);
		expect(answer.inputSchema).toEqual(JSON.parse(endpoint.input_schema));
		expect(answer.readme).toBe(endpoint.readme);
		expect(answer.note).toBeUndefined();
	});

	test('cuts a long readme first, then leaves out the output schema, then cuts the input schema', () => {
		const [endpoint] = catalogue(1);
		const longReadme = { ...endpoint, readme: 'r'.repeat(100_000) };
		const cutReadme = endpointAnswer(longReadme);
		expect(answerBytes(cutReadme)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
		expect(cutReadme.inputSchema).toEqual(JSON.parse(endpoint.input_schema));
		expect(cutReadme.note).toMatch(/readme \(100000 characters\) is cut/);

		const hugeSchema = JSON.stringify({
			type: 'object',
			properties: Object.fromEntries(
				Array.from({ length: 2000 }, (_, n) => [`field_${n}`, { type: 'string' }]),
			),
		});
		const cutSchema = endpointAnswer({ ...longReadme, input_schema: hugeSchema });
		expect(answerBytes(cutSchema)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
		expect(cutSchema).not.toHaveProperty('readme');
		expect(cutSchema).not.toHaveProperty('outputSchema');
		expect(hugeSchema.startsWith(String(cutSchema.inputSchema))).toBe(true);
	});
});

describe('jobAnswer', () => {
	test('gives id, endpoint, status, timings and a small output whole', () => {
		expect(jobAnswer(job({ echo: 'hi' }))).toEqual({
			id: '3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b',
			endpoint: 'echo',
			status: 'succeeded',
			createdAt: '2026-11-28T10:00:00.000Z',
			startedAt: '2026-11-28T10:00:01.000Z',
			finishedAt: '2026-11-28T10:00:03.250Z',
			runSeconds: 2.3,
			output: { echo: 'hi' },
		});
	});

	test('cuts an output past the stated size, escapes counted, and the parts make the whole', () => {
		// Quotes and line breaks double in size inside JSON: the cut must count them escaped.
		const output = { text: '"quoted"\n'.repeat(5000), note: 'ünïcødé 😀 '.repeat(500) };
		const whole = JSON.stringify(output);
		const parts: string[] = [];
		let offset = 0;
		for (;;) {
			const answer = jobAnswer(job(output), { outputOffset: offset });
			expect(answerBytes(answer)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
			expect(answer.output).toBeUndefined();
			const part = answer.outputPart ?? '';
			expect(utf8Bytes(JSON.stringify(part))).toBeLessThanOrEqual(TOOL_JOB_OUTPUT_MAX_BYTES);
			parts.push(part);
			offset += part.length;
			if (offset >= whole.length) {
				expect(answer.note).toMatch(/its end from character \d+ is shown/);
				break;
			}
			expect(answer.note).toContain(`with Output Offset ${offset}.`);
		}
		expect(parts.join('')).toBe(whole);
	});

	test('lists jobs without their outputs, as many as fit', () => {
		const jobs = Array.from({ length: 400 }, () => job({ echo: 'x'.repeat(1000) }));
		const answer = jobListAnswer(jobs);
		expect(answerBytes(answer)).toBeLessThanOrEqual(TOOL_ANSWER_MAX_BYTES);
		expect(answer.jobs[0]).not.toHaveProperty('output');
		expect(answer.jobs.length).toBeLessThan(400);
		expect(answer.note).toContain(`The first ${answer.jobs.length} of 400 jobs are listed`);
	});
});
