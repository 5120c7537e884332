import { cpus, totalmem } from 'node:os';

export interface Figure {
	/** What was measured, with its unit, e.g. "requests/s". */
	name: string;
	unit: string;
	samples: number[];
	/** Higher is better (throughput) or lower is better (latency, memory). */
	better: 'higher' | 'lower';
}

export interface Comparison {
	subject: string;
	baseline: string;
	/** The target the ratio subject/baseline must meet, e.g. ">= 0.8". */
	target?: { op: '>=' | '<='; value: number };
}

export interface ScenarioResult {
	title: string;
	description: string;
	figures: Figure[];
	comparisons: Comparison[];
	/** Absolute targets, e.g. p99 ack latency < 200 ms. */
	checks: Array<{
		label: string;
		value: number;
		unit: string;
		op: '>=' | '<=' | '<';
		target: number;
	}>;
	notes?: string[];
}

export interface ScenarioOptions {
	/** A few seconds in all, for CI: proves the scenario runs, measures nothing worth keeping. */
	smoke: boolean;
	runs: number;
}

export type Scenario = (options: ScenarioOptions) => Promise<ScenarioResult>;

export function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function percentile(values: number[], p: number): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function format(value: number): string {
	if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
	return value.toFixed(Math.abs(value) >= 10 ? 1 : 2);
}

function spread(samples: number[]): string {
	if (samples.length < 2) return '';
	return `${format(Math.min(...samples))} – ${format(Math.max(...samples))}`;
}

export function passes(op: '>=' | '<=' | '<', value: number, target: number): boolean {
	return op === '>=' ? value >= target : op === '<=' ? value <= target : value < target;
}

/** `provenance`: a line under the title saying when and how this section was measured. */
export function renderScenario(result: ScenarioResult, provenance?: string): string {
	const lines = [
		`## ${result.title}`,
		'',
		...(provenance ? [provenance, ''] : []),
		result.description,
		'',
		'| figure | median | spread (min – max) | runs |',
		'|---|---|---|---|',
	];
	for (const figure of result.figures) {
		lines.push(
			`| ${figure.name} (${figure.unit}) | ${format(median(figure.samples))} | ${spread(figure.samples)} | ${figure.samples.length} |`,
		);
	}
	const byName = new Map(result.figures.map((figure) => [figure.name, figure]));
	if (result.comparisons.length > 0) {
		lines.push('', '| ratio (same run) | value | target | met |', '|---|---|---|---|');
		for (const comparison of result.comparisons) {
			const subject = byName.get(comparison.subject);
			const baseline = byName.get(comparison.baseline);
			if (!subject || !baseline) continue;
			const ratio = median(subject.samples) / median(baseline.samples);
			const target = comparison.target;
			lines.push(
				`| ${comparison.subject} / ${comparison.baseline} | ${ratio.toFixed(2)}x | ${target ? `${target.op} ${target.value}x` : '—'} | ${target ? (passes(target.op, ratio, target.value) ? 'yes' : '**no**') : '—'} |`,
			);
		}
	}
	if (result.checks.length > 0) {
		lines.push('', '| check | value | target | met |', '|---|---|---|---|');
		for (const check of result.checks) {
			lines.push(
				`| ${check.label} | ${format(check.value)} ${check.unit} | ${check.op} ${format(check.target)} ${check.unit} | ${passes(check.op, check.value, check.target) ? 'yes' : '**no**'} |`,
			);
		}
	}
	if (result.notes?.length) lines.push('', ...result.notes.map((note) => `- ${note}`));
	return `${lines.join('\n')}\n`;
}

export function machineLine(): string {
	const cpu = cpus();
	return `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}/${process.arch}`;
}

/** Runs `work` for `total` iterations with `concurrency` workers; returns operations per second. */
export async function throughput(
	total: number,
	concurrency: number,
	work: (index: number) => Promise<void>,
): Promise<number> {
	let next = 0;
	const started = process.hrtime.bigint();
	await Promise.all(
		Array.from({ length: concurrency }, async () => {
			while (next < total) await work(next++);
		}),
	);
	const seconds = Number(process.hrtime.bigint() - started) / 1e9;
	return total / seconds;
}
