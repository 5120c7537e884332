/**
 * `npm run bench [-- <scenario>...] [--smoke] [--runs N]`: runs the scenarios against loopback
 * servers and writes their sections of docs/benchmarks.md (not in smoke mode), keeping every other
 * section, hand-written ones included. Compare ratios within one run only.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bulkN8n } from './bulk-n8n';
import { clientOverhead } from './client-overhead';
import { emulatorCeiling } from './emulator-ceiling';
import { imagesMemory } from './images-memory';
import { noticingCompletion } from './noticing-completion';
import { pollTrigger } from './poll-trigger';
import { sharedLimit } from './shared-limit';
import { machineLine, renderScenario, type Scenario, type ScenarioResult } from './lib';
import { slackChannelLoad } from './slack-channel-load';
import { slackLoad } from './slack-load';
import { slackReplicas } from './slack-replicas';
import { slackWorkspaces } from './slack-workspaces';
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
	'poll-trigger': pollTrigger,
	'slack-workspaces': slackWorkspaces,
	'slack-channel-load': slackChannelLoad,
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

interface Section {
	title: string;
	text: string;
}

/** The page's text before its first `## ` heading, and each section from its heading to the next. */
function splitSections(page: string): { header: string; sections: Section[] } {
	const [header, ...rest] = page.split(/^(?=## )/m);
	const sections = rest.map((text) => ({
		title: /^## (.*)$/m.exec(text)?.[1]?.trim() ?? '',
		text: `${text.trimEnd()}\n`,
	}));
	return { header: header.startsWith('## ') ? '' : header, sections };
}

/** A section's number ("9. n8n queue mode" is 9); unnumbered sections go last. */
function sectionNumber(title: string): number {
	const number = /^(\d+)\./.exec(title)?.[1];
	return number === undefined ? Number.POSITIVE_INFINITY : Number(number);
}

export interface ReportRun {
	/** Every scenario ran: the header states the runs for the whole page. */
	complete: boolean;
	runs: number;
	/** The command that produced the sections, for the line each one carries after a partial run. */
	command: string;
	date: string;
	machine: string;
}

/**
 * The page with the sections of `results` replaced (or added, in number order) and every other
 * section kept as it was: sections written by hand (e.g. from `npm run test:scale`) survive any
 * regeneration. After a partial run each new section says when and how it was measured, since the
 * page's header describes the last complete run.
 */
export function mergeReport(
	page: string | undefined,
	results: ScenarioResult[],
	run: ReportRun,
): string {
	const { header: oldHeader, sections } = splitSections(page ?? '');
	const provenance = run.complete
		? undefined
		: `Measured ${run.date} on ${run.machine} with \`${run.command}\`: ${run.runs === 1 ? 'one run' : `the median of ${run.runs} runs`}.`;
	for (const result of results) {
		const text = renderScenario(result, provenance);
		const index = sections.findIndex((section) => section.title === result.title);
		if (index >= 0) sections[index] = { title: result.title, text };
		else sections.push({ title: result.title, text });
	}
	// Stable: sections with the same number (or none) keep their order.
	sections.sort((a, b) => sectionNumber(a.title) - sectionNumber(b.title));
	const header =
		run.complete || !oldHeader.trim()
			? `# Benchmarks\n\nMeasured ${run.date} on ${run.machine} with \`npm run bench\`.\nEach figure is the median of ${run.runs} runs with its spread; ratios compare figures taken in the same run. Timings on a shared machine are noisy: compare ratios, not absolute numbers across runs. Sections that say how they were measured were measured apart from the rest.\n\n`
			: `${oldHeader.trimEnd()}\n\n`;
	return header + sections.map((section) => section.text).join('\n');
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
	console.log(results.map((result) => renderScenario(result)).join('\n'));
	if (!smoke) {
		const path = join(__dirname, '..', 'docs', 'benchmarks.md');
		// No page yet starts one; any other read error stops here rather than overwrite the page.
		const page = await readFile(path, 'utf8').catch((error: unknown) => {
			if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined;
			throw error;
		});
		const complete = names.length === 0 || Object.keys(SCENARIOS).every((n) => names.includes(n));
		const merged = mergeReport(page, results, {
			complete,
			runs,
			command: `npx tsx bench/run.ts ${names.join(' ')} --runs ${runs}`,
			date: new Date().toISOString().slice(0, 10),
			machine: machineLine(),
		});
		await writeFile(path, merged);
	}
}

if (require.main === module) {
	main().catch((error: unknown) => {
		console.error(error);
		process.exitCode = 1;
	});
}
