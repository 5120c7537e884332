import './env';
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
const PROVIDED_BY_N8N = new Set(['n8n-workflow', 'zod/v4', 'node:crypto', 'crypto']);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

beforeAll(() => {
  if (!existsSync(join(DIST, 'nodes', 'GpuCloud', 'GpuCloud.node.js'))) throw new Error('dist is missing: run `npm run build` first');
});

describe('The built package', () => {
  test("loads through n8n's package loader with both nodes, both credentials, icons and codex", async () => {
    const loader = new PackageDirectoryLoader(ROOT);
    await loader.loadAll();
    expect(Object.keys(loader.known.nodes).sort()).toEqual(['gpuCloud', 'gpuCloudTrigger']);
    expect(Object.keys(loader.known.credentials).sort()).toEqual(['gpuCloudApi', 'gpuCloudWorkloadApi']);

    for (const description of loader.types.nodes) {
      expect(description.iconUrl).toEqual({ light: expect.any(String), dark: expect.any(String) });
      const iconUrl = description.iconUrl;
      const icons = typeof iconUrl === 'object' && iconUrl ? [iconUrl.light, iconUrl.dark] : [];
      for (const icon of icons) expect(existsSync(join(ROOT, icon.replace(/^icons\/n8n-nodes-gpu-cloud\//, '')))).toBe(true);
      expect(description.codex?.categories).toEqual(['Development', 'AI']);
      expect(description.codex?.resources?.primaryDocumentation?.[0]?.url).toMatch(/^https:\/\//);
    }
    const gpuCloud = loader.types.nodes.find((description) => description.name === 'gpuCloud');
    expect(gpuCloud?.usableAsTool).toBe(true);
    expect(loader.types.credentials.map((credential) => credential.iconUrl)).toEqual([
      { light: expect.stringMatching(/dist\/credentials\/gpuCloud\.svg$/), dark: expect.stringMatching(/dist\/credentials\/gpuCloud\.dark\.svg$/) },
      { light: expect.stringMatching(/dist\/credentials\/gpuCloud\.svg$/), dark: expect.stringMatching(/dist\/credentials\/gpuCloud\.dark\.svg$/) },
    ]);
  });

  test('requires nothing at run time but n8n-workflow, zod/v4, crypto and its own files', () => {
    const external = new Set<string>();
    for (const file of filesUnder(DIST).filter((path) => path.endsWith('.js'))) {
      for (const [, name] of readFileSync(file, 'utf8').matchAll(/require\("([^"]+)"\)/g)) {
        if (!name.startsWith('.')) external.add(`${name} (${relative(DIST, file)})`);
      }
    }
    const unexpected = [...external].filter((entry) => !PROVIDED_BY_N8N.has(entry.split(' ')[0]));
    expect(unexpected).toEqual([]);
  });
});
