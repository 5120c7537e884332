import { randomUUID } from 'node:crypto';
import type { Job } from '../../shared/schemas';

/** A job as the service returns it; fields can be overridden per test. */
export function jobFixture(overrides: Partial<Job> = {}): Job {
	const time = '2026-01-01T00:00:00.000Z';
	return {
		id: randomUUID(),
		inference_endpoint_name: 'transcribe',
		organization_name: 'acme',
		input: { url: 'https://files.example/audio.mp3?sig=abc' },
		status: 'pending',
		events: [{ action: 'created', time }],
		create_time: time,
		update_time: time,
		...overrides,
	};
}
