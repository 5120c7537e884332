import type { RunningEmulator } from '../../emulator';
import { jobSchema, type Job } from '../../shared/schemas';

/** Creates a job straight at the emulator's API, as another client of the same organization would. */
export async function createJobAt(
	emulator: RunningEmulator,
	endpoint: string,
	input: unknown,
): Promise<Job> {
	const reply = await fetch(
		`${emulator.baseUrl}/organizations/${emulator.organization}/inference-endpoints/${endpoint}/jobs`,
		{
			method: 'POST',
			headers: { 'content-type': 'application/json', 'service-api-key': emulator.apiKey },
			body: JSON.stringify({ input }),
		},
	);
	if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${await reply.text()}`);
	return jobSchema.parse(await reply.json());
}

/** Cancels a job straight at the emulator's API. */
export async function cancelJobAt(emulator: RunningEmulator, job: Job): Promise<void> {
	const reply = await fetch(
		`${emulator.baseUrl}/organizations/${emulator.organization}/inference-endpoints/${job.inference_endpoint_name}/jobs/${job.id}`,
		{ method: 'DELETE', headers: { 'service-api-key': emulator.apiKey } },
	);
	if (reply.status !== 202) throw new Error(`cancel failed: ${reply.status} ${await reply.text()}`);
}

/** `count` jobs one after another, each created at least a millisecond after the one before. */
export async function createJobsAt(
	emulator: RunningEmulator,
	endpoint: string,
	count: number,
	input: (index: number) => unknown = (index) => ({ index }),
): Promise<Job[]> {
	const jobs: Job[] = [];
	for (let index = 0; index < count; index++) {
		if (index > 0) await new Promise((resolve) => setTimeout(resolve, 2));
		jobs.push(await createJobAt(emulator, endpoint, input(index)));
	}
	return jobs;
}
