/**
 * `npm run scan`: n8n's community-package scanner, offline. Packs the package as npm would publish
 * it and runs `analyzePackage()` of @n8n/scan-community-package on both legs n8n's own scan lints:
 * the source (package.json, nodes/, credentials/) and the packed tarball (its compiled .js and
 * package.json). Only the scanner's first step is skipped: checking npm provenance needs the
 * registry of a published version. Fails on any error, and on any warning, which the scanner
 * reports without failing (a missing homepage, for one).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ESLint, type Linter } from 'eslint';
import { z } from 'zod';

const ROOT = join(__dirname, '..', '..');

const scannerSchema = z.object({
	analyzePackage: z.custom<(dir: string, patterns: string[]) => Promise<unknown>>(
		(value) => typeof value === 'function',
	),
	buildScanConfig: z.custom<() => Promise<Linter.Config[]>>((value) => typeof value === 'function'),
	SOURCE_FILE_PATTERNS: z.array(z.string()),
});
const verdictSchema = z.object({
	passed: z.boolean(),
	message: z.string().optional(),
	details: z.string().optional(),
});
const packedSchema = z.array(z.object({ filename: z.string() })).length(1);

/** The scanner's own ESLint setup (`analyzePackage` keeps its results to itself), for the warnings. */
async function warnings(
	scanner: z.infer<typeof scannerSchema>,
	dir: string,
	patterns: string[],
): Promise<string | undefined> {
	const eslint = new ESLint({
		cwd: dir,
		allowInlineConfig: false,
		overrideConfigFile: true,
		overrideConfig: await scanner.buildScanConfig(),
	});
	// ESLint's own globbing leaves out node_modules, as the scanner's file list does.
	const results = await eslint.lintFiles(patterns);
	if (!results.some((result) => result.warningCount > 0)) return undefined;
	const formatter = await eslint.loadFormatter('stylish');
	return await formatter.format(results.filter((result) => result.warningCount > 0));
}

async function main(): Promise<void> {
	// The scanner ships no types and no exports map: its module is checked here instead.
	const scannerModule: string = '@n8n/scan-community-package/scanner/scanner.mjs';
	const scanner = scannerSchema.parse(await import(scannerModule));
	const workDir = mkdtempSync(join(tmpdir(), 'n8n-scan-'));
	try {
		const packed = packedSchema.parse(
			JSON.parse(
				execFileSync('npm', ['pack', '--json', '--pack-destination', workDir], {
					cwd: ROOT,
					encoding: 'utf8',
				}),
			),
		);
		const packageDir = join(workDir, 'package');
		execFileSync('tar', ['-xzf', join(workDir, packed[0].filename), '-C', workDir]);

		const legs = [
			{ name: 'source', dir: ROOT, patterns: scanner.SOURCE_FILE_PATTERNS },
			{
				name: `tarball ${packed[0].filename}`,
				dir: packageDir,
				patterns: ['**/*.js', 'package.json'],
			},
		];
		let failed = false;
		for (const leg of legs) {
			const verdict = verdictSchema.parse(await scanner.analyzePackage(leg.dir, leg.patterns));
			const warned = await warnings(scanner, leg.dir, leg.patterns);
			if (verdict.passed && !warned) {
				process.stdout.write(`scan ${leg.name}: 0 errors, 0 warnings\n`);
				continue;
			}
			failed = true;
			process.stdout.write(
				`scan ${leg.name}: ${verdict.passed ? 'warnings' : (verdict.message ?? 'failed')}\n${verdict.details ?? ''}${warned ?? ''}\n`,
			);
		}
		if (failed) process.exitCode = 1;
	} finally {
		rmSync(workDir, { recursive: true, force: true });
	}
}

main().catch((error: unknown) => {
	process.stderr.write(
		`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
	);
	process.exitCode = 1;
});
