/**
 * `npm version` runs this (the "version" script) after bumping package.json and before committing
 * and tagging: a release without its entry in the Version history stops there.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

const ROOT = join(__dirname, '..', '..');

export function packageVersion(): string {
	return z
		.object({ version: z.string() })
		.parse(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))).version;
}

/** Whether CHANGELOG.md has a `## <version>` section. */
export function changelogHasSection(version: string): boolean {
	return readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8')
		.split('\n')
		.some((line) => line.trim() === `## ${version}` || line.startsWith(`## ${version} `));
}

if (require.main === module && !changelogHasSection(packageVersion())) {
	process.stderr.write(
		`CHANGELOG.md has no "## ${packageVersion()}" section: add what this version changes, then run the release again.\n`,
	);
	process.exitCode = 1;
}
