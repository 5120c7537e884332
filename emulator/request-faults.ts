import type { ServerResponse } from 'node:http';
import type { Faults } from './faults';
import { problem, type Reply } from './http';
import type { RequestFaultKind } from './options';

/**
 * Which fault hits a request, and how each one is written. The server asks before routing (faults
 * that answer instead of the service) and after (faults that spoil the service's own reply).
 */

/** Answered instead of the service, in the order their rates are drawn. */
const BEFORE = ['rate-limit', 'error', 'html-error', 'gateway-timeout', 'drop', 'hang'] as const;
export type BeforeFault = (typeof BEFORE)[number];

/** Faults of the edge in front of the service: the request may still reach it (lateArrivalMs). */
export const EDGE_FAULTS: ReadonlySet<RequestFaultKind> = new Set([
	'html-error',
	'gateway-timeout',
	'drop',
	'hang',
]);

/** `scripted` is the sequence's choice for this request; undefined leaves it to the rates. */
export function faultBefore(
	faults: Faults,
	scripted: RequestFaultKind | null | undefined,
): BeforeFault | undefined {
	const before = (kind: RequestFaultKind | null): kind is BeforeFault =>
		(BEFORE as readonly (RequestFaultKind | null)[]).includes(kind);
	if (scripted !== undefined) return before(scripted) ? scripted : undefined;
	return BEFORE.find((kind) => faults.roll(kind));
}

export type AfterFault = 'reset' | 'malformed' | 'stall';

/** Only a successful JSON reply is made malformed: a garbled error would prove nothing new. */
const malformable = (reply: Reply) => reply.json === true && reply.status < 300;

export function faultAfter(
	faults: Faults,
	scripted: RequestFaultKind | null | undefined,
	reply: Reply,
): AfterFault | undefined {
	if (scripted !== undefined) {
		if (scripted === 'reset' || scripted === 'stall') return scripted;
		return scripted === 'malformed' && malformable(reply) ? scripted : undefined;
	}
	if (faults.roll('reset')) return 'reset';
	if (malformable(reply) && faults.roll('malformed')) return 'malformed';
	return faults.roll('stall') ? 'stall' : undefined;
}

/** Chat streams apply these themselves, part-way through. */
export function streamFault(
	faults: Faults,
	scripted: RequestFaultKind | null | undefined,
): 'stream-error' | 'stream-cut' | undefined {
	if (scripted !== undefined)
		return scripted === 'stream-error' || scripted === 'stream-cut' ? scripted : undefined;
	if (!faults.hits('chat')) return undefined;
	if (faults.roll('stream-error')) return 'stream-error';
	return faults.roll('stream-cut') ? 'stream-cut' : undefined;
}

const edgePage = (status: number, title: string) => ({
	status,
	headers: { 'content-type': 'text/html; charset=utf-8' },
	body: `<!DOCTYPE html><html><head><title>${status} ${title}</title></head><body><center><h1>${status} ${title}</h1></center><hr><center>edge</center></body></html>`,
});

/** The answer of a before-fault; undefined for those that send none (drop, hang). */
export function faultReply(kind: BeforeFault, path: string, faults: Faults): Reply | undefined {
	switch (kind) {
		case 'rate-limit':
			return problem(429, 'Too many requests (injected fault).', path, {
				'retry-after': String(faults.retryAfterSeconds),
			});
		case 'error':
			return problem(503, 'The service is temporarily unavailable (injected fault).', path);
		// Edges send their own pages, not the service's problem details.
		case 'html-error':
			return edgePage(502, 'Bad Gateway');
		case 'gateway-timeout':
			return edgePage(504, 'Gateway Time-out');
		default:
			return undefined;
	}
}

const bodyOf = (reply: Reply): Buffer => Buffer.from(reply.body ?? '');

/** Writes `reply` spoiled by `kind`: cut, truncated, or left hanging half-way. */
export function sendSpoiled(res: ServerResponse, reply: Reply, kind: AfterFault): void {
	const body = bodyOf(reply);
	const half = body.subarray(0, Math.floor(body.length / 2));
	if (kind === 'malformed') {
		// The truncated text is the whole reply: the length matches, only the JSON is broken.
		const text = body.subarray(0, Math.max(1, half.length));
		res.writeHead(reply.status, { ...reply.headers, 'content-length': text.length });
		res.end(text);
		return;
	}
	if (body.length === 0) {
		// Nothing to cut part-way: a reset closes before the status line, a stall sends nothing.
		if (kind === 'reset') res.destroy();
		return;
	}
	// The promised length stays the full body's, so the client knows more should come.
	res.writeHead(reply.status, { ...reply.headers, 'content-length': body.length });
	if (kind === 'reset') res.write(half, () => res.destroy());
	else res.write(half);
}
