import { SCENARIOS } from '../../bench/run';

/**
 * Every benchmark scenario in its few-second smoke version, so the benchmarks keep running as the
 * code changes. Only the shape of the results is checked: timings on shared CI machines mean nothing.
 */

describe('benchmark scenarios (smoke)', () => {
	it.each(Object.keys(SCENARIOS))(
		'%s runs and reports finite figures',
		async (name) => {
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
		},
		120_000,
	);
});
