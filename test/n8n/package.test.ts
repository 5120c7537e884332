import './env';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PackageDirectoryLoader } from 'n8n-core';

/**
 * The built package as n8n loads it: through n8n's own loader, from `dist`, with nothing required
 * at run time that n8n does not provide. Needs `npm run build` first (`npm test` does it).
 */

const ROOT = join(__dirname, '..', '..');
const DIST = join(ROOT, 'dist');

/** What n8n puts on the module path of a community package, plus our own compiled files. */
/** luxon: on n8n's allow-list for community nodes, at the top of n8n 2.8.4's and 2.41.3's node_modules. */
const PROVIDED_BY_N8N = new Set(['n8n-workflow', 'zod/v4', 'node:crypto', 'crypto', 'luxon']);
/** Provided from n8n 2.16 only, so required only when the chat model is used, never when the package loads. */
const AI_NODE_SDK = '@n8n/ai-node-sdk';
const CHAT_MODEL_FILE = join('nodes', 'GpuCloudChatModel', 'GpuCloudChatModel.node.js');

function filesUnder(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		return statSync(path).isDirectory() ? filesUnder(path) : [path];
	});
}

beforeAll(() => {
	if (!existsSync(join(DIST, 'nodes', 'GpuCloud', 'GpuCloud.node.js')))
		throw new Error('dist is missing: run `npm run build` first');
});

describe('The built package', () => {
	test("loads through n8n's package loader with the four nodes, the three credentials, icons and codex", async () => {
		const loader = new PackageDirectoryLoader(ROOT);
		await loader.loadAll();
		expect(Object.keys(loader.known.nodes).sort()).toEqual([
			'gpuCloud',
			'gpuCloudChatModel',
			'gpuCloudPollTrigger',
			'gpuCloudTrigger',
		]);
		expect(Object.keys(loader.known.credentials).sort()).toEqual([
			'gpuCloudApi',
			'gpuCloudObjectStorageApi',
			'gpuCloudWorkloadApi',
		]);

		for (const description of loader.types.nodes) {
			expect(description.iconUrl).toEqual({ light: expect.any(String), dark: expect.any(String) });
			const iconUrl = description.iconUrl;
			const icons = typeof iconUrl === 'object' && iconUrl ? [iconUrl.light, iconUrl.dark] : [];
			for (const icon of icons)
				expect(existsSync(join(ROOT, icon.replace(/^icons\/n8n-nodes-gpu-cloud\//, '')))).toBe(
					true,
				);
			expect(description.codex?.categories).toContain('Development');
			expect(description.codex?.resources?.primaryDocumentation?.[0]?.url).toMatch(/^https:\/\//);
		}
		const gpuCloud = loader.types.nodes.find((description) => description.name === 'gpuCloud');
		expect(gpuCloud?.usableAsTool).toBe(true);
		const credentialIcon = {
			light: expect.stringMatching(/dist\/credentials\/gpuCloud\.svg$/),
			dark: expect.stringMatching(/dist\/credentials\/gpuCloud\.dark\.svg$/),
		};
		expect(loader.types.credentials.map((credential) => credential.iconUrl)).toEqual([
			credentialIcon,
			credentialIcon,
			credentialIcon,
		]);
	});

	test('requires nothing at run time but n8n-workflow, zod/v4, crypto, luxon, its own files and (in the chat model, lazily) the AI node SDK', () => {
		const external = new Set<string>();
		for (const file of filesUnder(DIST).filter((path) => path.endsWith('.js'))) {
			for (const [, name] of readFileSync(file, 'utf8').matchAll(/require\(["']([^"']+)["']\)/g)) {
				if (!name.startsWith('.')) external.add(`${name} (${relative(DIST, file)})`);
			}
		}
		const unexpected = [...external].filter((entry) => !PROVIDED_BY_N8N.has(entry.split(' ')[0]));
		expect(unexpected).toEqual([`${AI_NODE_SDK} (${CHAT_MODEL_FILE})`]);
		// TypeScript's form of a dynamic import(): a require run only when the promise chain runs.
		const chatModel = readFileSync(join(DIST, CHAT_MODEL_FILE), 'utf8');
		expect(chatModel).toContain(
			`Promise.resolve().then(() => __importStar(require('${AI_NODE_SDK}')))`,
		);
	});

	test('loads on an n8n without the AI node SDK (before 2.16): every node and credential is there, and the chat model says what it needs', () => {
		// A separate Node process whose module resolution fails for the SDK, as in n8n 2.8.4.
		const script = `
      const Module = require('node:module');
      const resolve = Module._resolveFilename;
      Module._resolveFilename = function (request, ...rest) {
        if (request === '${AI_NODE_SDK}' || request.startsWith('${AI_NODE_SDK}/')) {
          throw Object.assign(new Error("Cannot find module '" + request + "'"), { code: 'MODULE_NOT_FOUND' });
        }
        return resolve.call(this, request, ...rest);
      };
      process.env.N8N_USER_FOLDER = process.env.N8N_USER_FOLDER || require('node:os').tmpdir();
      const { PackageDirectoryLoader } = require('n8n-core');
      const loader = new PackageDirectoryLoader(${JSON.stringify(ROOT)});
      let sdkMissing = false;
      try { require('${AI_NODE_SDK}'); } catch { sdkMissing = true; }
      // Using the chat model there fails with a message that says why (only getNode() is reached).
      const { GpuCloudChatModel } = require(${JSON.stringify(join(DIST, CHAT_MODEL_FILE))});
      const node = { id: '1', name: 'GPU Cloud Chat Model', type: 'gpuCloudChatModel', typeVersion: 1, position: [0, 0], parameters: {} };
      loader.loadAll()
        .then(() => new GpuCloudChatModel().supplyData.call({ getNode: () => node }, 0).then(() => 'supplied', (error) => error.message))
        .then((used) => {
          process.stdout.write(JSON.stringify({ sdkMissing, nodes: Object.keys(loader.known.nodes).sort(), credentials: Object.keys(loader.known.credentials).sort(), used }));
        }, (error) => { process.stderr.write(String(error)); process.exit(1); });
    `;
		const output = execFileSync(process.execPath, ['-e', script], {
			cwd: ROOT,
			encoding: 'utf8',
			env: { ...process.env },
		});
		expect(JSON.parse(output)).toEqual({
			sdkMissing: true,
			nodes: ['gpuCloud', 'gpuCloudChatModel', 'gpuCloudPollTrigger', 'gpuCloudTrigger'],
			credentials: ['gpuCloudApi', 'gpuCloudObjectStorageApi', 'gpuCloudWorkloadApi'],
			used: 'The GPU Cloud Chat Model needs n8n 2.16 or newer.',
		});
	});
});
