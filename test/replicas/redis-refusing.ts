import { createClient } from 'redis';

/** The kinds of key the app keeps in Redis, each under `gpu-cloud-slack:<kind>:` (slack-app/state/shared-state.ts). */
const KEY_KINDS = [
	'lease',
	'delivered',
	'slots',
	'once:slack-signature',
	'once:slack-event',
	'once:webhook',
	'once:followed-up',
	'budget',
	'budget-held',
];

/**
 * Runs `work` while Redis refuses the app's keys of one kind and answers every other: to a replica,
 * Redis then does not answer those calls (it retries them until they pass). Afterwards Redis
 * answers them all again.
 */
export async function whileRedisRefuses<T>(
	redisUrl: string,
	refused: string,
	work: () => Promise<T>,
): Promise<T> {
	if (!KEY_KINDS.includes(refused)) throw new Error(`The app keeps no ${refused} keys.`);
	const admin = createClient({ url: redisUrl });
	await admin.connect();
	try {
		const allowed = KEY_KINDS.filter((kind) => kind !== refused).map(
			(kind) => `~gpu-cloud-slack:${kind}:*`,
		);
		await admin.sendCommand(['ACL', 'SETUSER', 'default', 'resetkeys', ...allowed]);
		return await work();
	} finally {
		await admin.sendCommand(['ACL', 'SETUSER', 'default', 'allkeys']);
		await admin.quit();
	}
}
