/** Scenario 6: Standard Webhooks signature checks per second on one core, 1 KB and 1 MB bodies. */
import { randomBytes } from 'node:crypto';
import { signWebhook, verifyWebhook } from '../shared/webhooks';
import type { Scenario } from './lib';

function checksPerSecond(bodyBytes: number, iterations: number): number {
	const secret = randomBytes(32).toString('base64');
	const body = JSON.stringify({
		type: 'inference_endpoint.job.succeeded',
		data: { pad: 'x'.repeat(bodyBytes) },
	}).slice(0, bodyBytes);
	const now = Math.floor(Date.now() / 1000);
	const signed = signWebhook(secret, body, { timestampSeconds: now });
	const raw = Buffer.from(signed.body);
	const started = process.hrtime.bigint();
	for (let i = 0; i < iterations; i++)
		verifyWebhook(secret, signed.headers, raw, { nowSeconds: now });
	return iterations / (Number(process.hrtime.bigint() - started) / 1e9);
}

export const webhookVerification: Scenario = async ({ smoke, runs }) => {
	const small: number[] = [];
	const large: number[] = [];
	for (let run = 0; run < runs; run++) {
		small.push(checksPerSecond(1024, smoke ? 500 : 100_000));
		large.push(checksPerSecond(1024 * 1024, smoke ? 5 : 300));
	}
	return {
		title: '6. Webhook verification',
		description:
			'HMAC-SHA256 signature checks (`verifyWebhook`: header parsing, timestamp window, constant-time compare) over raw bodies, one core, synchronous loop.',
		figures: [
			{ name: '1 KB body', unit: 'checks/s', samples: small, better: 'higher' },
			{ name: '1 MB body', unit: 'checks/s', samples: large, better: 'higher' },
		],
		comparisons: [],
		checks: [
			{
				label: 'checks/s at 1 KB',
				value: [...small].sort((a, b) => a - b)[Math.floor(small.length / 2)],
				unit: '/s',
				op: '>=',
				target: 20_000,
			},
		],
	};
};
