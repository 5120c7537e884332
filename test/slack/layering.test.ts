import { execFile } from 'node:child_process';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

/**
 * The Slack app's folders import only downwards (docs/architecture.md) and nothing imports in a
 * circle: eslint.config.mjs says so, and these lint small sources placed where a violation would
 * sit, so removing or loosening a rule fails here as well as in the code it guards.
 */

const ROOT = join(__dirname, '..', '..');

// ESLint loads eslint.config.mjs with a dynamic import, which Jest's module sandbox refuses: its
// Node API runs in a plain Node process, once for every source below. Each source is linted as if it
// were the content of an existing file of that folder (typed linting knows only the project's files).
const LINT = `
const { ESLint } = require('eslint');
const eslint = new ESLint({ cwd: process.cwd() });
(async () => {
	const out = [];
	for (const [path, source] of JSON.parse(process.argv[1])) {
		const [result] = await eslint.lintText(source, { filePath: path });
		out.push(result.messages.map((message) => message.ruleId));
	}
	console.log(JSON.stringify(out));
})();
`;

const CASES: [name: string, path: string, target: string][] = [
	['a message importing a feature', 'slack-app/messages/help.ts', '../features/command-parser'],
	['the model importing a message', 'slack-app/model/index.ts', '../messages/format'],
	['state importing the request engine', 'slack-app/state/timeout.ts', '../requests/lifecycle'],
	['a feature importing a listener', 'slack-app/features/queues.ts', '../listeners'],
	['the request engine importing the composition', 'slack-app/requests/outcome.ts', '../app'],
	['the app importing the stand-in', 'slack-app/serve.ts', '../slack-standin'],
	['shared/ importing the Slack app', 'shared/clock.ts', '../slack-app/model'],
];
// Allowed: a feature importing a message. A cycle: faults.ts imports prng.ts, so prng.ts importing
// faults.ts back closes a circle.
const ALLOWED = ['slack-app/features/queues.ts', '../messages/format'] as const;
const CYCLE = ['emulator/prng.ts', './faults'] as const;

let ruleIds: (string | null)[][] = [];
beforeAll(async () => {
	const sources = [...CASES.map(([, path, target]) => [path, target]), ALLOWED, CYCLE].map(
		([path, target]) => [join(ROOT, path), `export * from '${target}';\n`],
	);
	const { stdout } = await promisify(execFile)(
		process.execPath,
		['-e', LINT, JSON.stringify(sources)],
		{ cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
	);
	ruleIds = JSON.parse(stdout) as (string | null)[][];
}, 120_000);

it.each(CASES.map(([name], index) => [name, index] as const))('refuses %s', (_, index) => {
	expect(ruleIds[index]).toContain('import-x/no-restricted-paths');
});

it('allows the same kind of import downwards', () => {
	expect(ruleIds[CASES.length]).toEqual([]);
});

it('refuses an import cycle', () => {
	expect(ruleIds[CASES.length + 1]).toContain('import-x/no-cycle');
});
it('the packed app compiles no stand-in and no emulator file', async () => {
	// pack.ts compiles slack-app/tsconfig.build.json: bin.ts and what it imports, nothing else.
	const { stdout } = await promisify(execFile)(
		process.execPath,
		[
			require.resolve('typescript/bin/tsc'),
			'-p',
			'slack-app/tsconfig.build.json',
			'--listFilesOnly',
		],
		{ cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
	);
	const ours = stdout
		.split('\n')
		.map((file) => relative(ROOT, file.trim()))
		.filter((file) => file && !file.startsWith('..') && !file.includes('node_modules'));
	expect(ours).toContain(join('slack-app', 'bin.ts'));
	expect(ours.filter((file) => /^(slack-standin|emulator|test)\//.test(file))).toEqual([]);
}, 120_000);
