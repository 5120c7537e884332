import { readFileSync } from 'node:fs';
import { freePort } from '../../slack-app/local';
import { Service } from './processes';

/** Linux hands ports in this range to outgoing connections (PostgreSQL, Redis clients). */
function ephemeralRange(): [number, number] {
	const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
		.trim()
		.split(/\s+/)
		.map(Number);
	return [low, high];
}

describe('processes the end-to-end suites start', () => {
	test('a port chosen up front lies outside the ephemeral range, so no outgoing connection takes it before the server binds it', async () => {
		const [low, high] = ephemeralRange();
		for (let i = 0; i < 20; i++) {
			const port = await freePort();
			expect(port < low || port > high).toBe(true);
		}
	});

	test('a service that exits before it is ready fails with the end of what it printed', async () => {
		const service = new Service(
			process.execPath,
			[
				'-e',
				"console.log('starting'); console.error('port 5678 is already in use'); process.exit(1)",
			],
			{ env: process.env },
		);
		await expect(service.waitForOutput('Editor is now accessible via', 10_000)).rejects.toThrow(
			/exited \(1\)[\s\S]*port 5678 is already in use/,
		);
		await service.stop();
	});
});
