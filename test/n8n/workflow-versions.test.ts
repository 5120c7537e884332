import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';

/**
 * The built package against the n8n-workflow of every n8n it claims: the newest n8n tested (the
 * `n8n-workflow` devDependency) and the floor (`n8n-workflow-floor`, n8n 2.8.4's). A helper that
 * one of them lacks breaks users at run time, not our build: dist-probe.ts loads dist in a Node
 * process of its own with `require("n8n-workflow")` answered by each version in turn and runs the
 * dist code behind every export it reads. Needs `npm run build` first (`npm test` does it).
 */

const ROOT = join(__dirname, '..', '..');

const reportSchema = z.object({
	target: z.string(),
	version: z.string(),
	redirected: z.number(),
	zod: z.object({ version: z.string(), requests: z.array(z.string()) }),
	loaded: z.array(z.string()),
	reads: z.object({ required: z.array(z.string()), optional: z.array(z.string()) }),
	exports: z.record(z.string(), z.string()),
	exercised: z.record(z.string(), z.object({ ok: z.boolean(), detail: z.string() })),
});

async function probe(target: string): Promise<z.infer<typeof reportSchema>> {
	const { stdout } = await promisify(execFile)(
		process.execPath,
		['--import', 'tsx', join(__dirname, 'dist-probe.ts'), target],
		{ cwd: ROOT },
	);
	return reportSchema.parse(JSON.parse(stdout));
}

beforeAll(() => {
	if (!existsSync(join(ROOT, 'dist', 'nodes', 'GpuCloud', 'GpuCloud.node.js')))
		throw new Error('dist is missing: run `npm run build` first');
});

/**
 * The zod each n8n puts on a community package's module path (n8n's own dependency, in its
 * package.json: n8n@2.41.1 `zod: 3.25.76`, n8n@2.8.4 `zod: 3.25.67`). n8n's rules leave no way to
 * declare it (`dependencies` must be empty; `peerDependencies` may name only n8n-workflow and
 * @n8n/ai-node-sdk) and list zod among the imports n8n provides, so the package relies on n8n's.
 */
describe.each([
	['the newest n8n tested', 'n8n-workflow', '2.41.0', '3.25.76'],
	['the oldest n8n claimed', 'n8n-workflow-floor', '2.8.0', '3.25.67'],
])('The built package on the n8n-workflow of %s', (_label, target, version, zodVersion) => {
	let report: z.infer<typeof reportSchema>;
	beforeAll(async () => {
		report = await probe(target);
	}, 30_000);

	test(`loads every node and credential from dist with n8n-workflow ${version}`, () => {
		expect(report.version).toBe(version);
		expect(report.redirected).toBeGreaterThan(0);
		expect(report.loaded).toEqual([
			expect.stringMatching(/^node gpuCloud /),
			expect.stringMatching(/^node gpuCloudTrigger /),
			expect.stringMatching(/^node gpuCloudPollTrigger /),
			// Its description loads on any n8n; only using it needs the AI SDK of n8n 2.16+.
			expect.stringMatching(/^node gpuCloudChatModel /),
			'credential gpuCloudApi',
			'credential gpuCloudObjectStorageApi',
			'credential gpuCloudWorkloadApi',
		]);
	});

	test(`runs on the zod that n8n ships (${zodVersion}), required only as zod/v4, the API both zod 3.25 and 4 serve`, () => {
		expect(report.zod).toEqual({ version: zodVersion, requests: ['zod/v4'] });
	});

	test('finds every export dist relies on, and only looks up the ones that may be missing', () => {
		// Guards the scan itself: an empty list would make the checks below pass vacuously.
		expect(report.reads.required).toEqual(
			expect.arrayContaining(['NodeOperationError', 'updateDisplayOptions']),
		);
		const missing = report.reads.required.filter((name) => report.exports[name] === 'undefined');
		expect(missing).toEqual([]);
	});

	test('runs the dist code behind each of those exports, and it works', () => {
		const present = [...report.reads.required, ...report.reads.optional].filter(
			(name) => report.exports[name] !== 'undefined',
		);
		expect(Object.keys(report.exercised).sort()).toEqual(present.sort());
		const failed = Object.entries(report.exercised).filter(([, result]) => !result.ok);
		expect(failed).toEqual([]);
	});
});
