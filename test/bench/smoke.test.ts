import { SCENARIOS } from '../../bench/run';
import { expectSmokeRuns, LONG_SMOKE, NEEDS_DEBIAN_SERVICES } from './smoke-check';

describe('benchmark scenarios (smoke)', () => {
	it.each(
		Object.keys(SCENARIOS).filter(
			(name) => !NEEDS_DEBIAN_SERVICES.includes(name) && !LONG_SMOKE.includes(name),
		),
	)('%s runs and reports finite figures', expectSmokeRuns, 120_000);
});
