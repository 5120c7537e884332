import { join } from 'node:path';
import { askChild, forkBenchChild, stopChild } from '../../bench/bulk-n8n';
import { floorReplySchema } from '../../bench/floor-server';

/** The IPC with bench children, asked thousands of times in a run (scenario 10's sender). */

it('leaves no listener behind on the child once it has answered', async () => {
	const child = await forkBenchChild(join(__dirname, '..', '..', 'bench', 'floor-server.ts'));
	try {
		const before = { exit: child.listenerCount('exit'), error: child.listenerCount('error') };
		await askChild(child, { signingSecret: 'secret' }, floorReplySchema);
		expect({ exit: child.listenerCount('exit'), error: child.listenerCount('error') }).toEqual(
			before,
		);
	} finally {
		await stopChild(child);
	}
});
