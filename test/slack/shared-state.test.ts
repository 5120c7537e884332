import { systemClock } from '../../shared/runtime';
import { LocalSharedState } from '../../slack-app/state/local-state';
import { describeSharedStateContract } from './shared-state-contract';

/** One process: claims and slots in memory, what outlives a restart in its state file. */
describeSharedStateContract('one process (LocalSharedState)', {
	open: async (stateFile) => new LocalSharedState(stateFile, systemClock),
	// Its memory dies with it; the state file stays.
	die: async () => undefined,
});
