import { randomUUID } from 'node:crypto';
import { jobSchema, webhookSecretKeySchema } from '../../shared/schemas';
import { parseJobWebhook, verifyWebhook } from '../../shared/webhooks';
import { startEmulator, type RunningEmulator } from '../../emulator';
import {
	api,
	call,
	emulatorFor,
	expectProblem,
	startReceiver,
	waitFor,
	type Received,
} from './helpers';

/**
 * Several organizations in one emulator, as on the real service: an API key belongs to one
 * organization and is answered only there (interface document §5: the caller must be a member of the
 * organization in the path); jobs, queues and the webhook secret are the organization's own.
 */

const BRAVO = {
	name: 'bravo-labs',
	apiKey: 'bravo-key-0000',
	webhookSecret: Buffer.from('bravo-labs-webhook-secret-000000').toString('base64'),
};
const CHARLIE = { name: 'charlie', apiKey: 'charlie-key-0000' };

let emulator: RunningEmulator;
beforeEach(async () => {
	emulator = await emulatorFor({
		jobDurationMs: 60,
		workloadAuth: true,
		organizations: [BRAVO, CHARLIE],
	});
});
afterEach(() => emulator.close());

const alphaKey = () => emulator.apiKey;
const jobsPath = (organization: string, endpoint = 'echo') =>
	`/organizations/${organization}/inference-endpoints/${endpoint}/jobs`;

async function createJob(
	organization: string,
	key: string,
	endpoint: string,
	body: Record<string, unknown>,
) {
	const reply = await api(emulator, 'POST', jobsPath(organization, endpoint), { key, body });
	expect(reply.status).toBe(201);
	return jobSchema.parse(reply.json());
}

function verifies(received: Received, secret: string): boolean {
	try {
		verifyWebhook(secret, received.headers, received.body, { nowSeconds: Date.now() / 1000 });
		return true;
	} catch {
		return false;
	}
}

describe('several organizations', () => {
	it('lists every organization, the first one being the default options', () => {
		expect(emulator.organizations.map((org) => org.name)).toEqual([
			emulator.organization,
			BRAVO.name,
			CHARLIE.name,
		]);
		expect(emulator.organizations[0]).toEqual({
			name: emulator.organization,
			apiKey: emulator.apiKey,
			webhookSecret: emulator.webhookSecret,
			project: 'default',
		});
		const secrets = new Set(emulator.organizations.map((org) => org.webhookSecret));
		expect(secrets.size).toBe(3);
	});

	it('answers a key only for its own organization: 403 on another organization, 401 for an unknown key', async () => {
		const own = await api(emulator, 'GET', `/organizations/${BRAVO.name}/inference-endpoints`, {
			key: BRAVO.apiKey,
		});
		expect(own.status).toBe(200);
		expect(
			(own.json() as { items: { organization_name: string }[] }).items.every(
				(item) => item.organization_name === BRAVO.name,
			),
		).toBe(true);
		expectProblem(
			await api(emulator, 'GET', `/organizations/${BRAVO.name}/inference-endpoints`, {
				key: alphaKey(),
			}),
			403,
		);
		expectProblem(
			await api(emulator, 'GET', `/organizations/${emulator.organization}/inference-endpoints`, {
				key: BRAVO.apiKey,
			}),
			403,
		);
		expectProblem(
			await api(emulator, 'POST', jobsPath(emulator.organization), {
				key: BRAVO.apiKey,
				body: { input: 1 },
			}),
			403,
		);
		expectProblem(
			await api(emulator, 'GET', `/organizations/${BRAVO.name}/inference-endpoints`, {
				key: 'nobody-key',
			}),
			401,
		);
		expect(emulator.jobsOf(emulator.organization)).toEqual([]);
	});

	it("a key cannot read, list or cancel another organization's job", async () => {
		const job = await createJob(BRAVO.name, BRAVO.apiKey, emulator.slowEndpoint, {
			input: { secret: 'bravo' },
		});
		expect(job.organization_name).toBe(BRAVO.name);
		const alpha = emulator.organization;
		// On its own organization's path the job does not exist; on the other organization's path the key is not a member.
		expectProblem(
			await api(emulator, 'GET', `${jobsPath(alpha, emulator.slowEndpoint)}/${job.id}`, {
				key: alphaKey(),
			}),
			404,
		);
		expectProblem(
			await api(emulator, 'DELETE', `${jobsPath(alpha, emulator.slowEndpoint)}/${job.id}`, {
				key: alphaKey(),
			}),
			404,
		);
		expectProblem(
			await api(emulator, 'GET', `${jobsPath(BRAVO.name, emulator.slowEndpoint)}/${job.id}`, {
				key: alphaKey(),
			}),
			403,
		);
		expectProblem(
			await api(emulator, 'DELETE', `${jobsPath(BRAVO.name, emulator.slowEndpoint)}/${job.id}`, {
				key: CHARLIE.apiKey,
			}),
			403,
		);
		const alphaList = await api(emulator, 'GET', jobsPath(alpha, emulator.slowEndpoint), {
			key: alphaKey(),
		});
		expect(alphaList.json()).toMatchObject({ items: [], total_size: 0 });
		expect(alphaList.text).not.toContain(job.id);
		// Still running in its own organization, visible to its own key.
		const own = await api(
			emulator,
			'GET',
			`${jobsPath(BRAVO.name, emulator.slowEndpoint)}/${job.id}`,
			{ key: BRAVO.apiKey },
		);
		expect(own.status).toBe(200);
		expect(jobSchema.parse(own.json()).status).not.toBe('cancelled');
		expect(
			(
				await api(emulator, 'GET', jobsPath(BRAVO.name, emulator.slowEndpoint), {
					key: BRAVO.apiKey,
				})
			).json(),
		).toMatchObject({ total_size: 1 });
		expect(emulator.jobsOf(BRAVO.name).map((each) => each.id)).toEqual([job.id]);
		expect(emulator.jobsOf(alpha)).toEqual([]);
		expect(emulator.getJob(job.id)?.organization_name).toBe(BRAVO.name);
		// Its own key can cancel it.
		expect(
			(
				await api(emulator, 'DELETE', `${jobsPath(BRAVO.name, emulator.slowEndpoint)}/${job.id}`, {
					key: BRAVO.apiKey,
				})
			).status,
		).toBe(202);
	});

	it("signs each job's webhook with its own organization's secret only", async () => {
		const receiver = await startReceiver();
		try {
			const secretOf = async (organization: string, key: string) =>
				webhookSecretKeySchema.parse(
					(
						await api(emulator, 'GET', `/organizations/${organization}/webhook-secret-key`, { key })
					).json(),
				).secret_key;
			const alphaSecret = await secretOf(emulator.organization, alphaKey());
			const bravoSecret = await secretOf(BRAVO.name, BRAVO.apiKey);
			const charlieSecret = await secretOf(CHARLIE.name, CHARLIE.apiKey);
			expect(bravoSecret).toBe(BRAVO.webhookSecret);
			expect(new Set([alphaSecret, bravoSecret, charlieSecret]).size).toBe(3);
			expectProblem(
				await api(emulator, 'GET', `/organizations/${BRAVO.name}/webhook-secret-key`, {
					key: alphaKey(),
				}),
				403,
			);

			const alphaJob = await createJob(emulator.organization, alphaKey(), 'echo', {
				input: 'a',
				webhook_url: `${receiver.url}?alpha`,
			});
			const bravoJob = await createJob(BRAVO.name, BRAVO.apiKey, 'echo', {
				input: 'b',
				webhook_url: `${receiver.url}?bravo`,
			});
			const charlieJob = await createJob(CHARLIE.name, CHARLIE.apiKey, 'echo', {
				input: 'c',
				webhook_url: `${receiver.url}?charlie`,
			});
			await waitFor(() => receiver.received.length === 3, 'three deliveries');
			const deliveryOf = (jobId: string) => {
				const found = receiver.received.find(
					(received) => parseJobWebhook(received.body).data.id === jobId,
				);
				if (!found) throw new Error(`no delivery for ${jobId}`);
				return found;
			};
			const cases = [
				[alphaJob, alphaSecret, emulator.organization],
				[bravoJob, bravoSecret, BRAVO.name],
				[charlieJob, charlieSecret, CHARLIE.name],
			] as const;
			for (const [job, secret, organization] of cases) {
				const delivery = deliveryOf(job.id);
				expect(parseJobWebhook(delivery.body).data.organization_name).toBe(organization);
				for (const other of [alphaSecret, bravoSecret, charlieSecret])
					expect(verifies(delivery, other)).toBe(other === secret);
			}
			await emulator.deliveriesSettled();
			expect(
				emulator.deliveries.find((attempt) => attempt.jobId === bravoJob.id)?.organization,
			).toBe(BRAVO.name);
		} finally {
			await receiver.close();
		}
	});

	it('keeps queues and projects per organization', async () => {
		const body = { name: 'renders' };
		expect(
			(
				await api(
					emulator,
					'POST',
					`/organizations/${emulator.organization}/projects/default/queues`,
					{ key: alphaKey(), body },
				)
			).status,
		).toBe(201);
		expect(
			(
				await api(emulator, 'POST', `/organizations/${BRAVO.name}/projects/default/queues`, {
					key: BRAVO.apiKey,
					body,
				})
			).status,
		).toBe(201);
		expectProblem(
			await api(emulator, 'POST', `/organizations/${BRAVO.name}/projects/default/queues`, {
				key: BRAVO.apiKey,
				body,
			}),
			409,
		);
	});

	it('lets any organization through the workload gateway, and no unknown key', async () => {
		for (const key of [alphaKey(), BRAVO.apiKey, CHARLIE.apiKey])
			expect((await call(`${emulator.chatUrl}/health`, 'GET', key)).status).toBe(200);
		expectProblem(await call(`${emulator.chatUrl}/health`, 'GET', 'nobody-key'), 401);
	});
});

describe('organization options', () => {
	it('refuses a repeated organization name or API key', async () => {
		await expect(
			startEmulator({ organizations: [{ name: 'acme', apiKey: 'other-key' }] }),
		).rejects.toThrow(/"acme" more than once/);
		await expect(
			startEmulator({ organizations: [{ name: 'other', apiKey: 'dev-api-key-0000' }] }),
		).rejects.toThrow(/API key of "other"/);
		await expect(
			startEmulator({ organizations: [{ name: 'Not A Name', apiKey: randomUUID() }] }),
		).rejects.toThrow(/organizations\.0\.name/);
	});
});
