/**
 * Run as its own Node process by workflow-versions.test.ts (jest's module system would hide what
 * Node really does): loads the BUILT package from dist with every `require("n8n-workflow")` of it
 * answered by the package named on the command line (`n8n-workflow`, the newest n8n's, or
 * `n8n-workflow-floor`, the oldest n8n's), exercises every export of n8n-workflow that dist reads,
 * and prints one JSON report on stdout.
 */
import Module from 'node:module';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';

const ROOT = join(__dirname, '..', '..');
const DIST = join(ROOT, 'dist');
const target = z.enum(['n8n-workflow', 'n8n-workflow-floor']).parse(process.argv[2]);

type Resolve = (
	request: string,
	parent: { filename?: string | null } | undefined,
	...rest: unknown[]
) => string;
const originalResolve = Reflect.get(Module, '_resolveFilename') as Resolve;
let redirected = 0;
/**
 * zod as it resolves next to the target n8n-workflow: n8n-workflow-floor (2.8.0) brings its own,
 * the version n8n 2.8.4 ships; for the newest it is the repository's, the version n8n 2.41.1 ships.
 */
const TARGET_DIR = dirname(require.resolve(`${target}/package.json`));
const zodRequests = new Set<string>();
const resolveForDist: Resolve = function (this: unknown, request, parent, ...rest) {
	const fromDist = parent?.filename?.startsWith(DIST) ?? false;
	if (fromDist && (request === 'zod' || request.startsWith('zod/'))) {
		zodRequests.add(request);
		return require.resolve(request, { paths: [TARGET_DIR] });
	}
	if (fromDist && (request === 'n8n-workflow' || request.startsWith('n8n-workflow/'))) {
		redirected++;
		return originalResolve.call(
			this,
			target + request.slice('n8n-workflow'.length),
			parent,
			...rest,
		);
	}
	return originalResolve.call(this, request, parent, ...rest);
};
Reflect.set(Module, '_resolveFilename', resolveForDist);

function jsFilesUnder(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) return jsFilesUnder(path);
		return path.endsWith('.js') ? [path] : [];
	});
}

/**
 * What dist reads off n8n-workflow, from tsc's CommonJS output: `const x = require("n8n-workflow")`
 * (or `__importStar(require(...))`), then `x.Name`; `Reflect.get(x, 'Name')` marks a feature that is
 * looked up, so it may be missing.
 */
function namesDistReads(): { required: string[]; optional: string[] } {
	const required = new Set<string>();
	const optional = new Set<string>();
	for (const file of jsFilesUnder(DIST)) {
		const source = readFileSync(file, 'utf8');
		for (const [, binding] of source.matchAll(
			/(?:const|var|let) (\w+) = (?:__importStar\()?require\("n8n-workflow"\)/g,
		)) {
			for (const [, name] of source.matchAll(
				new RegExp(`Reflect\\.get\\(${binding}, '(\\w+)'\\)`, 'g'),
			))
				optional.add(name);
			for (const [, name] of source.matchAll(new RegExp(`\\b${binding}\\.(\\w+)`, 'g')))
				required.add(name);
		}
	}
	return { required: [...required].sort(), optional: [...optional].sort() };
}

const node = {
	id: 'probe',
	name: 'GPU Cloud',
	type: 'n8n-nodes-gpu-cloud.gpuCloud',
	typeVersion: 1,
	position: [0, 0] as [number, number],
	parameters: {},
};

/** An export that must be a function or class; `Function` is what Reflect.construct and instanceof take. */
function exportedFunction(module: unknown, name: string): Function {
	const value: unknown = Reflect.get(Object(module), name);
	if (typeof value !== 'function') throw new Error(`${name} is ${typeof value}, not a function`);
	return value;
}

function call(fn: Function, ...args: unknown[]): unknown {
	return Reflect.apply(fn, undefined, args);
}

async function main() {
	// Loaded before any dist file, so a dist file cannot have loaded the other copy first.
	const workflow: unknown = require(target);
	const version = z
		.object({ version: z.string() })
		.parse(require(`${target}/package.json`)).version;
	const manifest = z
		.object({ n8n: z.object({ nodes: z.array(z.string()), credentials: z.array(z.string()) }) })
		.parse(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')));
	/** Per export of n8n-workflow: did the dist code that uses it work, and what it did. */
	const exercised: Record<string, { ok: boolean; detail: string }> = {};

	// Loading the node files runs updateDisplayOptions (every operation's description) and reads
	// NodeConnectionTypes (inputs and outputs); the credentials take no runtime import today.
	const described = z.object({
		description: z.object({ name: z.string(), properties: z.array(z.unknown()) }),
	});
	const credential = z.object({ name: z.string(), properties: z.array(z.unknown()) });
	const loaded: string[] = [];
	for (const file of [...manifest.n8n.nodes, ...manifest.n8n.credentials]) {
		const module: unknown = require(join(ROOT, file));
		for (const name of Object.keys(Object(module))) {
			const instance: unknown = Reflect.construct(exportedFunction(module, name), []);
			const asNode = described.safeParse(instance);
			loaded.push(
				asNode.success
					? `node ${asNode.data.description.name} (${asNode.data.description.properties.length} parameters)`
					: `credential ${credential.parse(instance).name}`,
			);
		}
	}
	const gpuCloud = z
		.object({
			description: z.object({
				inputs: z.array(z.unknown()),
				properties: z.array(z.object({ displayOptions: z.unknown().optional() })),
			}),
		})
		.parse(
			Reflect.construct(
				exportedFunction(require(join(DIST, 'nodes', 'GpuCloud', 'GpuCloud.node.js')), 'GpuCloud'),
				[],
			),
		);
	exercised.NodeConnectionTypes = {
		ok: JSON.stringify(gpuCloud.description.inputs) === '["main"]',
		detail: `inputs ${JSON.stringify(gpuCloud.description.inputs)}`,
	};
	const shownPerOperation = gpuCloud.description.properties.filter(
		(property) =>
			z
				.object({
					show: z.object({ resource: z.array(z.string()), operation: z.array(z.string()) }),
				})
				.safeParse(property.displayOptions).success,
	).length;
	exercised.updateDisplayOptions = {
		ok: shownPerOperation > 40,
		detail: `${shownPerOperation} parameters shown for one resource and operation`,
	};

	// Errors: what every failed operation turns into; instanceof proves they are the target's classes.
	const toNodeError = exportedFunction(
		require(join(DIST, 'nodes', 'GpuCloud', 'helpers', 'errors.js')),
		'toNodeError',
	);
	const sharedErrors: unknown = require(join(DIST, 'shared', 'errors.js'));
	const invalid = call(
		toNodeError,
		node,
		Reflect.construct(exportedFunction(sharedErrors, 'ValidationError'), [
			[{ field: 'jobId', rule: 'is required', value: '' }],
		]),
		0,
	);
	const notFound = call(
		toNodeError,
		node,
		Reflect.construct(exportedFunction(sharedErrors, 'NotFoundError'), [
			'Job not found.',
			{ status: 404 },
		]),
		0,
	);
	const alreadyN8ns = Reflect.construct(exportedFunction(workflow, 'NodeOperationError'), [
		node,
		'already an n8n error',
	]);
	exercised.NodeOperationError = {
		ok: invalid instanceof exportedFunction(workflow, 'NodeOperationError'),
		detail: 'a field error becomes a NodeOperationError',
	};
	exercised.NodeApiError = {
		ok:
			notFound instanceof exportedFunction(workflow, 'NodeApiError') &&
			Reflect.get(Object(notFound), 'httpCode') === '404',
		detail: 'a 404 becomes a NodeApiError with httpCode 404',
	};
	exercised.ExecutionBaseError = {
		ok: call(toNodeError, node, alreadyN8ns, 0) === alreadyN8ns,
		detail: 'an n8n error passes through unchanged',
	};

	// The clock every polling wait, rate-limit wait and retry sleeps on.
	const clock: unknown = Reflect.get(
		Object(require(join(DIST, 'nodes', 'GpuCloud', 'transport', 'index.js'))),
		'n8nClock',
	);
	const clockSleep = exportedFunction(clock, 'sleep');
	const sleep = (ms: number, signal?: AbortSignal): Promise<unknown> =>
		Promise.resolve(call(clockSleep, ms, signal));
	const timed = async (run: () => Promise<unknown>): Promise<{ ms: number; error?: string }> => {
		const started = performance.now();
		try {
			await run();
			return { ms: performance.now() - started };
		} catch (error) {
			return {
				ms: performance.now() - started,
				error: error instanceof Error ? error.message : String(error),
			};
		}
	};
	const controller = new AbortController();
	const cancelled = timed(() => sleep(30_000, controller.signal));
	setTimeout(() => controller.abort(new Error('execution cancelled')), 50);
	const plain = await timed(() => sleep(60));
	const withSignal = await timed(() => sleep(60, new AbortController().signal));
	const cancelledMidway = await cancelled;
	const slept = {
		ok:
			!plain.error &&
			plain.ms >= 55 &&
			!withSignal.error &&
			withSignal.ms >= 55 &&
			cancelledMidway.error !== undefined &&
			cancelledMidway.ms < 1_000,
		detail: JSON.stringify({ plain, withSignal, cancelledMidway }),
	};
	// The clock prefers sleepWithAbort where the running n8n has it: the same waits exercise it.
	exercised.sleep = slept;
	if (typeof Reflect.get(Object(workflow), 'sleepWithAbort') === 'function')
		exercised.sleepWithAbort = slept;

	const reads = namesDistReads();
	const kindOf = (name: string) => typeof Reflect.get(Object(workflow), name);
	process.stdout.write(
		JSON.stringify({
			target,
			version,
			redirected,
			zod: {
				version: z
					.object({ version: z.string() })
					.parse(require(require.resolve('zod/package.json', { paths: [TARGET_DIR] }))).version,
				requests: [...zodRequests].sort(),
			},
			loaded,
			reads,
			exports: Object.fromEntries(
				[...reads.required, ...reads.optional].map((name) => [name, kindOf(name)]),
			),
			exercised,
		}),
	);
}

main().catch((error: unknown) => {
	process.stderr.write(error instanceof Error ? (error.stack ?? error.message) : String(error));
	process.exitCode = 1;
});
