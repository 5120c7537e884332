import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod/v4';

/**
 * What a contributor finds: CONTRIBUTING.md (suites, their needs, one test, layout, release), a
 * workflow that runs CI on pull requests (the README says "CI runs it"), and a README that says
 * which suites `npm test` leaves to their own scripts. The workflow cannot run here: it is parsed
 * as YAML and must call .ci/run, which runs every suite the README names.
 */

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFile(join(ROOT, path), 'utf8');

const workflowSchema = z.object({
	name: z.string(),
	on: z.object({ pull_request: z.null().or(z.object({})), push: z.unknown() }),
	jobs: z.record(
		z.string(),
		z.object({
			'runs-on': z.string(),
			container: z.string().optional(),
			'timeout-minutes': z.number(),
			steps: z.array(z.object({ uses: z.string().optional(), run: z.string().optional() })),
		}),
	),
});

it('runs .ci/run on every pull request, in a Debian container with Node 24', async () => {
	const workflow = workflowSchema.parse(parse(await read('.github/workflows/ci.yml')));
	const jobs = Object.values(workflow.jobs);
	expect(jobs).toHaveLength(1);
	const [job] = jobs;
	expect(job.container).toMatch(/^node:24-(bookworm|trixie)$/);
	expect(job.steps.map((step) => step.run).filter(Boolean)).toEqual(['.ci/run']);
	expect(job.steps[0].uses).toMatch(/^actions\/checkout@/);
	await access(join(ROOT, '.ci', 'run'));
});

it('has .ci/run run every suite npm test leaves out, and the README and CONTRIBUTING.md name them', async () => {
	const scripts = (JSON.parse(await read('package.json')) as { scripts: Record<string, string> })
		.scripts;
	const suites = Object.keys(scripts).filter((name) => /^test:/.test(name));
	expect(suites.sort()).toEqual(
		['test:db', 'test:e2e', 'test:install', 'test:replicas', 'test:scale'].sort(),
	);
	const ci = await read('.ci/run');
	const readme = await read('README.md');
	const contributing = await read('CONTRIBUTING.md');
	for (const suite of suites) {
		expect([suite, ci.includes(`npm run ${suite}`)]).toEqual([suite, true]);
		expect([suite, contributing.includes(`npm run ${suite}`)]).toEqual([suite, true]);
		expect([suite, readme.includes(`\`${suite}\``)]).toEqual([suite, true]);
	}
	expect(ci).toMatch(/^npm test$/m);
	expect(readme).toMatch(/\]\(CONTRIBUTING\.md\)/);
});

// Facts and commands, not wording: every command CONTRIBUTING.md gives works as written.
it('gives commands in CONTRIBUTING.md that exist: npm scripts, test files, test names, folders', async () => {
	const scripts = (JSON.parse(await read('package.json')) as { scripts: Record<string, string> })
		.scripts;
	const contributing = await read('CONTRIBUTING.md');
	const npmRuns = [...contributing.matchAll(/npm run ([\w:-]+)/g)].map((match) => match[1]);
	expect(npmRuns).toEqual(expect.arrayContaining(['release', 'typecheck']));
	expect(npmRuns.filter((name) => !(name in scripts))).toEqual([]);
	// Running one test: the files exist, and a name given to -t is a test in that file.
	const jestRuns = [...contributing.matchAll(/npx jest (test\/\S+\.test\.ts)(?: -t '([^']+)')?/g)];
	expect(jestRuns.length).toBeGreaterThan(0);
	for (const [, file, name] of jestRuns) {
		const source = await read(file);
		if (name) expect([file, source.includes(name)]).toEqual([file, true]);
	}
	// The layout rules name folders that exist.
	const folders = [
		...contributing.matchAll(/`((?:shared|nodes|slack-app|emulator|test|bench)\/[\w/-]*)`/g),
	].map((match) => match[1]);
	expect(folders.length).toBeGreaterThan(0);
	for (const folder of folders) await access(join(ROOT, folder));
});
