import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { changelogHasSection, packageVersion } from './changelog';

/**
 * The publish workflow cannot run here (it needs GitHub's OIDC token), so what can be checked is
 * checked: it parses, it publishes with provenance through trusted publishing (no npm token), and
 * every command it runs exists in package.json.
 */

const ROOT = join(__dirname, '..', '..');
const packageJson = z
	.object({
		scripts: z.record(z.string(), z.string()),
		repository: z.object({ url: z.string() }),
		homepage: z.string(),
		bugs: z.object({ url: z.string() }),
	})
	.parse(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')));

const stepSchema = z.object({
	name: z.string().optional(),
	run: z.string().optional(),
	uses: z.string().optional(),
});
const workflowSchema = z.object({
	on: z.object({ push: z.object({ tags: z.array(z.string()) }) }),
	jobs: z.record(
		z.string(),
		z.object({ permissions: z.record(z.string(), z.string()), steps: z.array(stepSchema) }),
	),
});

const source = readFileSync(join(ROOT, '.github', 'workflows', 'publish.yml'), 'utf8');
const workflow = workflowSchema.parse(parse(source));
const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
const commands = steps.flatMap((step) =>
	step.run ? step.run.split(/&&|\n/).map((command) => command.trim()) : [],
);

describe('The publish workflow', () => {
	test('runs on version tags, which `npm version` (the release script) creates', () => {
		expect(workflow.on.push.tags).toEqual(['v*.*.*']);
		expect(packageJson.scripts.release).toBe('npm version');
		expect(packageJson.scripts.postversion).toMatch(/git push --follow-tags/);
	});

	test('publishes with provenance through OIDC trusted publishing, with no npm token', () => {
		const [publishJob] = Object.values(workflow.jobs).filter((job) =>
			job.steps.some((step) => step.run?.includes('npm publish')),
		);
		expect(publishJob.permissions['id-token']).toBe('write');
		expect(commands.filter((command) => command.startsWith('npm publish'))).toEqual([
			'npm publish --provenance --access public',
		]);
		expect(source).not.toMatch(/NPM_TOKEN|NODE_AUTH_TOKEN|secrets\./);
	});

	test('builds, lints, tests and scans before publishing, with scripts that exist', () => {
		const npmCommands = commands.filter((command) => command.startsWith('npm '));
		const publishAt = npmCommands.findIndex((command) => command.startsWith('npm publish'));
		const before = npmCommands.slice(0, publishAt);
		expect(before).toEqual(
			expect.arrayContaining([
				'npm ci --no-audit --no-fund',
				'npm run lint',
				'npm test',
				'npm run scan',
			]),
		);
		for (const command of npmCommands) {
			const script =
				/^npm (?:run|run-script) ([\w:-]+)/.exec(command)?.[1] ??
				(command === 'npm test' ? 'test' : undefined);
			if (script) expect(Object.keys(packageJson.scripts)).toContain(script);
		}
		expect(packageJson.scripts.test).toMatch(/npm run build/);
	});

	test('publishes from the repository package.json names, which provenance must match', () => {
		const repository = packageJson.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
		expect(packageJson.homepage.startsWith(repository)).toBe(true);
		expect(packageJson.bugs.url).toBe(`${repository}/issues`);
	});

	test('the Version history has an entry for the version in package.json', () => {
		expect(changelogHasSection(packageVersion())).toBe(true);
		expect(changelogHasSection('0.0.0-never')).toBe(false);
	});
});
