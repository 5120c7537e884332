import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../clock';

export const systemClock: Clock = {
	now: () => Date.now(),
	sleep: async (ms, signal) => {
		await delay(Math.max(0, ms), undefined, { signal });
	},
};
