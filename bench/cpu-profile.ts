/**
 * Summarises a V8 CPU profile (`node --cpu-prof`) of a replica: self time grouped by what runs it
 * (Slack's signature check, body parsing, Bolt, the Redis client, the Web API client, logging, our
 * own code, Node's HTTP and sockets, JSON, GC, idle). A sample whose frame is native and unnamed
 * (a builtin) counts for the nearest caller that has a source. `npx tsx bench/cpu-profile.ts <file>`
 * prints the table.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod/v4';

const profileSchema = z.object({
	nodes: z.array(
		z.object({
			id: z.number(),
			callFrame: z.object({ functionName: z.string(), url: z.string() }),
			children: z.array(z.number()).optional(),
		}),
	),
	/** Microseconds of the monotonic clock (process.hrtime's), as are the deltas. */
	startTime: z.number(),
	samples: z.array(z.number()),
	timeDeltas: z.array(z.number()),
});

/** A span of the monotonic clock, in microseconds (process.hrtime.bigint() / 1000n). */
export interface Window {
	fromUs: number;
	toUs: number;
}

/** Now on the clock a profile's samples are timed by. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

type Frame = { functionName: string; url: string };

/** The group of a frame, or undefined when its caller decides (a builtin without a source). */
function groupOf({ functionName, url }: Frame): string | undefined {
	if (functionName === '(idle)') return 'idle';
	if (functionName === '(garbage collector)') return 'GC';
	if (functionName === '(program)') return 'V8 and native (program)';
	if (functionName === '(root)') return 'V8 and native (program)';
	if (
		/node:internal\/crypto|timingSafeEqual/.test(url) ||
		/^(createHmac|timingSafeEqual)$/.test(functionName)
	)
		return 'signature HMAC';
	if (/node:querystring|raw-body|body-parser/.test(url)) return 'body parsing';
	if (/\/slack-app\/(dist\/slack-app\/)?slack\/log\.|\/slack\/log\.ts/.test(url)) return 'logging';
	if (/\/slack-app\/(dist\/slack-app\/)?http\/receiver/.test(url)) return 'our receiver';
	if (/node_modules\/@slack\/bolt/.test(url)) return 'Bolt (middleware, processEvent)';
	if (/node_modules\/(@redis|redis)\//.test(url)) return 'Redis client';
	if (/node_modules\/(@slack\/web-api|axios|form-data|follow-redirects)/.test(url))
		return 'Slack Web API client';
	if (/node_modules\/(zod)/.test(url)) return 'zod parsing';
	if (/\/(slack-app|shared)\//.test(url) && !url.includes('node_modules'))
		return 'our listeners and shared/';
	if (
		/node:(_http|http|net|internal\/(streams|http|net|stream_base|url|dns|timers|async_hooks))/.test(
			url,
		)
	)
		return "Node's HTTP, sockets, timers";
	if (/^(parse|stringify)$/.test(functionName) && !url) return 'JSON';
	if (/node_modules\/undici|node:internal\/deps\/undici/.test(url)) return 'fetch (undici)';
	if (!url) return undefined;
	return url.includes('node_modules') ? 'other packages' : 'other Node internals';
}

/** Milliseconds of self time per group (within `window` when given), largest first. */
export async function summariseProfile(
	path: string,
	window?: Window,
): Promise<Array<[string, number]>> {
	const profile = profileSchema.parse(JSON.parse(await readFile(path, 'utf8')));
	const byId = new Map(profile.nodes.map((node) => [node.id, node]));
	const parent = new Map<number, number>();
	for (const node of profile.nodes)
		for (const child of node.children ?? []) parent.set(child, node.id);
	const groups = new Map<number, string>();
	const group = (id: number): string => {
		const known = groups.get(id);
		if (known) return known;
		const node = byId.get(id);
		const up = parent.get(id);
		const found =
			(node && groupOf(node.callFrame)) ??
			(up === undefined ? 'V8 and native (program)' : group(up));
		groups.set(id, found);
		return found;
	};
	const ms = new Map<string, number>();
	let at = profile.startTime;
	profile.samples.forEach((id, i) => {
		const delta = profile.timeDeltas[i] ?? 0;
		at += delta;
		if (window && (at < window.fromUs || at > window.toUs)) return;
		const name = group(id);
		ms.set(name, (ms.get(name) ?? 0) + delta / 1000);
	});
	return [...ms].sort((a, b) => b[1] - a[1]);
}

/** "Bolt 40% (120 ms), …" of the busy time (idle left out), then idle. */
export function describeProfile(groups: Array<[string, number]>): string {
	const busy = groups.filter(([name]) => name !== 'idle');
	const total = busy.reduce((sum, [, ms]) => sum + ms, 0);
	const idle = groups.find(([name]) => name === 'idle')?.[1] ?? 0;
	return `${Math.round(total)} ms busy: ${busy
		.map(([name, ms]) => `${name} ${((ms / total) * 100).toFixed(0)}% (${Math.round(ms)} ms)`)
		.join(', ')}; idle ${Math.round(idle)} ms`;
}

if (require.main === module) {
	const file = process.argv[2];
	if (!file) throw new Error('Usage: npx tsx bench/cpu-profile.ts <file.cpuprofile>');
	void summariseProfile(file).then((groups) => console.log(describeProfile(groups)));
}
