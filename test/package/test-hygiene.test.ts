import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Two shapes of test that pass or fail by the machine's speed rather than the product (issue 36):
 *   - a stopwatch: `toBeLessThan(` / `toBeLessThanOrEqual(` on a time measured with the real clock;
 *   - a fixed sleep, then a "nothing happened" assertion in the same test: on a busy machine the
 *     thing waited for may not have happened yet, and the test proves nothing.
 * Wait on the event instead (support/eventually.ts, the app's idle(), the emulator's state) or on a
 * fake clock's pending timers; speed belongs in bench/. The scan is textual and simple on purpose:
 * a test is the text from one `it(`/`test(` to the next (helpers before the first test count as one).
 */

const TEST_ROOT = join(__dirname, '..');
const THIS_FILE = relative(TEST_ROOT, __filename);

/** A sleep for a fixed time: `setTimeout(resolve, 150)` in a promise, or a `sleep`/`pause`/`delay` helper. */
const SLEEP = /setTimeout\(\s*\w+\s*,\s*[\w.]+\s*\)|\b(?:sleep|pause|delay)\(/g;
/** "Nothing happened": a negated matcher, an empty list, zero, or the count taken before. */
const NOTHING =
	/\.not\.|toHaveLength\(0\)|toEqual\(\[\]\)|toBe\(0\)|toBeUndefined\(\)|toBeFalsy\(\)|to(?:Be|Equal)\(before\w*\)/g;
const TEST_START = /^\s*(?:it|test)(?:\.each\([\s\S]*?\))?\(/gm;
const UPPER_BOUND = /expect\(([^;]*?)\)\s*\.toBeLessThan(?:OrEqual)?\(([^;]*?)\);/g;
/** A real clock read, or a name that says the value checked is a time taken. */
const ELAPSED = /(?:Date|performance)\.now\(\)\s*-|\b(?:elapsed|took)\w*|\.ms\b|\b\w+Ms\b/;
const REAL_CLOCK = /(?:Date|performance)\.now\(\)/;

export interface Finding {
	line: number;
	text: string;
}

const lineOf = (source: string, index: number) => source.slice(0, index).split('\n').length;

/** Each fixed sleep followed, in the same test, by a "nothing happened" assertion. */
export function sleepsBeforeNothing(source: string): Finding[] {
	const starts = [
		0,
		...[...source.matchAll(TEST_START)].map((match) => match.index),
		source.length,
	];
	const found: Finding[] = [];
	for (let n = 0; n + 1 < starts.length; n++) {
		const test = source.slice(starts[n], starts[n + 1]);
		const sleep = new RegExp(SLEEP.source).exec(test);
		if (!sleep) continue;
		const nothing = new RegExp(NOTHING.source, 'g');
		nothing.lastIndex = sleep.index + sleep[0].length;
		const after = nothing.exec(test);
		if (after)
			found.push({
				line: lineOf(source, starts[n] + sleep.index),
				text: `${sleep[0]} ... ${after[0]}`,
			});
	}
	return found;
}

/** Each upper bound on an elapsed time (the value checked, or a bound read off the real clock). */
export function stopwatches(source: string): Finding[] {
	return (
		[...source.matchAll(UPPER_BOUND)]
			// A bound named ...Ms is usually a setting (maxDelayMs); only a clock read there counts.
			.filter((match) => ELAPSED.test(match[1]) || REAL_CLOCK.test(match[2]))
			.map((match) => ({ line: lineOf(source, match.index), text: match[0].slice(0, 100) }))
	);
}

function sourcesUnder(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return sourcesUnder(path);
		return entry.name.endsWith('.ts') ? [path] : [];
	});
}

/**
 * Known exceptions, each with why. Files here may keep exactly this many findings: fixing one means
 * lowering its count (the test says so), and a new one anywhere fails.
 */
const ALLOWED: Record<string, { sleeps?: number; stopwatches?: number; why: string }> = {
	'slack/background.test.ts': {
		stopwatches: 1,
		why: 'jest fake timers: performance.now() there is virtual time',
	},
	// Redis expires keys on its own clock: waiting out a lease is the behaviour under test.
	'replicas/shared-state.e2e.ts': { sleeps: 2, why: 'lease expiry in Redis, real time' },
	// Not reworked yet (issue 36, item 2): a fixed sleep before a "nothing happened" check. The
	// count only goes down: each file fixed leaves this list.
	'replicas/event-retry.e2e.ts': { sleeps: 1, why: 'issue 36, not reworked yet' },
};

describe('the scan', () => {
	it('finds a fixed sleep before a "nothing happened" assertion in one test, not across tests', () => {
		const source = [
			"it('sends nothing', async () => {",
			'\tawait new Promise((resolve) => setTimeout(resolve, 150));',
			'\texpect(emulator.deliveries).toHaveLength(0);',
			'});',
			"it('waits for the end', async () => {",
			"\tawait eventually('the job to end', () => ended());",
			'\texpect(posts()).not.toContain(secret);',
			'});',
			"test('sleeps, then a positive check', async () => {",
			'\tawait sleep(100);',
			'\texpect(posts()).toHaveLength(2);',
			'});',
		].join('\n');
		expect(sleepsBeforeNothing(source)).toEqual([
			{ line: 2, text: 'setTimeout(resolve, 150) ... toHaveLength(0)' },
		]);
	});

	it('finds upper bounds on elapsed real time, not on a fake clock or on counts', () => {
		const source = [
			'expect(Date.now() - started).toBeLessThan(5000);',
			'expect(reply.ms).toBeLessThan(1500);',
			'expect(elapsed).toBeLessThanOrEqual(1_000);',
			'expect(reads).toBeLessThanOrEqual((Date.now() - since) / 1000);',
			'expect(clock.now() - job.finishedAt).toBeLessThan(1000);',
			'expect(word.end).toBeLessThanOrEqual(result.duration_in_seconds);',
			'expect(waitedMs).toBeLessThanOrEqual(maxDelayMs);',
			'expect(run.answered429 / run.requests).toBeLessThan(0.1);',
		].join('\n');
		expect(stopwatches(source).map((finding) => finding.line)).toEqual([1, 2, 3, 4, 7]);
	});
});

describe('tests under test/', () => {
	const files = sourcesUnder(TEST_ROOT)
		.map((path) => relative(TEST_ROOT, path))
		.filter((path) => path !== THIS_FILE);
	const found = new Map(
		files.map((path) => {
			const source = readFileSync(join(TEST_ROOT, path), 'utf8');
			return [path, { sleeps: sleepsBeforeNothing(source), stopwatches: stopwatches(source) }];
		}),
	);

	it.each(['sleeps', 'stopwatches'] as const)('have no %s but those allowed', (kind) => {
		const unexpected = [...found].flatMap(([path, findings]) => {
			const allowed = ALLOWED[path]?.[kind] ?? 0;
			const list = findings[kind];
			return list.length > allowed
				? [`${path}: ${list.map((f) => `${f.line}: ${f.text}`).join('; ')}`]
				: [];
		});
		expect(unexpected).toEqual([]);
	});

	it('allow only what is still there (lower a count once a finding is fixed)', () => {
		const stale = Object.entries(ALLOWED).flatMap(([path, allowed]) =>
			(['sleeps', 'stopwatches'] as const)
				.filter((kind) => (allowed[kind] ?? 0) !== (found.get(path)?.[kind].length ?? 0))
				.map(
					(kind) =>
						`${path}: ${kind} allowed ${allowed[kind] ?? 0}, found ${found.get(path)?.[kind].length ?? 0}`,
				),
		);
		expect(stale).toEqual([]);
	});
});
