import { expectSmokeRuns, LONG_SMOKE, NEEDS_DEBIAN_SERVICES } from '../bench/smoke-check';

/** The benchmark scenarios npm test leaves out (Debian's redis-server and nginx, or a minute long), in their smoke versions. */
it.each([...NEEDS_DEBIAN_SERVICES, ...LONG_SMOKE])(
	'%s runs and reports finite figures',
	expectSmokeRuns,
	// slack-replicas starts six clusters, each waiting for its results at Slack's own limits: 2.5 min here.
	300_000,
);
