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
	expect(readme).toContain('[CONTRIBUTING.md](CONTRIBUTING.md)');
	for (const heading of [
		'## The suites',
		'## Running one test',
		'## Rules of the layout',
		'## Releasing',
	])
		expect(contributing).toContain(heading);
	expect(contributing).toContain('npm run release -- patch');
});
