import { expectSmokeRuns, NEEDS_DEBIAN_SERVICES } from '../bench/smoke-check';

/** The benchmark scenarios npm test leaves out (they start Debian's redis-server and nginx), in their smoke versions. */
it.each(NEEDS_DEBIAN_SERVICES)('%s runs and reports finite figures', expectSmokeRuns, 180_000);
