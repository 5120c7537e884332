import { SCENARIOS } from '../../bench/run';

/**
 * Runs a benchmark scenario in its few-second smoke version, so the benchmarks keep running as the
 * code changes. Only the shape of the results is checked: timings on shared CI machines mean nothing.
 */
export async function expectSmokeRuns(name: string): Promise<void> {
	const result = await SCENARIOS[name]({ smoke: true, runs: 1 });
	expect(result.title).not.toBe('');
	expect(result.figures.length).toBeGreaterThan(0);
	for (const figure of result.figures) {
		expect({ figure: figure.name, samples: figure.samples.length }).toEqual({
			figure: figure.name,
			samples: 1,
		});
		for (const sample of figure.samples)
			expect({ figure: figure.name, finite: Number.isFinite(sample) }).toEqual({
				figure: figure.name,
				finite: true,
			});
	}
	for (const check of result.checks)
		expect({ check: check.label, finite: Number.isFinite(check.value) }).toEqual({
			check: check.label,
			finite: true,
		});
	const names = new Set(result.figures.map((figure) => figure.name));
	for (const comparison of result.comparisons) {
		expect(names).toContain(comparison.subject);
		expect(names).toContain(comparison.baseline);
	}
}

/** Scenarios that start Debian's redis-server and nginx: smoke-run by `npm run test:replicas`, which CI installs them for. */
export const NEEDS_DEBIAN_SERVICES = ['slack-replicas'];

/**
 * Scenarios whose smoke run takes a minute (1,000 workspaces, processes spawned; ten minutes of
 * Slack's limits at twenty times the speed): smoke-run by `npm run test:replicas` too.
 */
export const LONG_SMOKE = ['slack-workspaces', 'slack-channel-load'];
