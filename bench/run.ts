/**
 * `npm run bench [-- <scenario>...] [--smoke] [--runs N]`: runs the scenarios against loopback
 * servers and writes docs/benchmarks.md (not in smoke mode). Compare ratios within one run only.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bulkN8n } from './bulk-n8n';
import { clientOverhead } from './client-overhead';
import { emulatorCeiling } from './emulator-ceiling';
import { imagesMemory } from './images-memory';
import { noticingCompletion } from './noticing-completion';
import { sharedLimit } from './shared-limit';
import { machineLine, renderScenario, type Scenario, type ScenarioResult } from './lib';
import { slackLoad } from './slack-load';
import { slackReplicas } from './slack-replicas';
import { webhookVerification } from './webhook-verify';

export const SCENARIOS: Record<string, Scenario> = {
	'client-overhead': clientOverhead,
	'bulk-n8n': bulkN8n,
	'shared-limit': sharedLimit,
	'noticing-completion': noticingCompletion,
	'slack-load': slackLoad,
	'images-memory': imagesMemory,
	'webhook-verify': webhookVerification,
	'emulator-ceiling': emulatorCeiling,
	'slack-replicas': slackReplicas,
};

export async function runScenarios(
	names: string[],
	options: { smoke: boolean; runs: number },
): Promise<ScenarioResult[]> {
	const results: ScenarioResult[] = [];
	for (const name of names) {
		const scenario = SCENARIOS[name];
		if (!scenario)
			throw new Error(`Unknown scenario "${name}". Known: ${Object.keys(SCENARIOS).join(', ')}`);
		results.push(await scenario(options));
	}
	return results;
}

async function main(): Promise<void> {
	const args = process.argv.slice(2);
	const smoke = args.includes('--smoke');
	const runsFlag = args.indexOf('--runs');
	const runs = runsFlag >= 0 ? Number(args[runsFlag + 1]) : smoke ? 1 : 5;
	const names = args.filter((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--runs');
	const results = await runScenarios(names.length ? names : Object.keys(SCENARIOS), {
		smoke,
		runs,
	});
	const report = results.map(renderScenario).join('\n');
	console.log(report);
	if (!smoke) {
		const header = `# Benchmarks\n\nMeasured ${new Date().toISOString().slice(0, 10)} on ${machineLine()} with \`npm run bench\`.\nEach figure is the median of ${runs} runs with its spread; ratios compare figures taken in the same run. Timings on a shared machine are noisy: compare ratios, not absolute numbers across runs.\n\n`;
		await writeFile(join(__dirname, '..', 'docs', 'benchmarks.md'), header + report);
	}
}

if (require.main === module) {
	main().catch((error: unknown) => {
		console.error(error);
		process.exitCode = 1;
	});
}
