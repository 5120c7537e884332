import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod/v4';
import { issuesOf } from '../shared/validation';
import type { FaultKind } from './faults';
import type { RequestFaultKind } from './options';

/** What a route answers; the server applies faults to it and writes it. */
export interface Reply {
	status: number;
	headers?: Record<string, string>;
	/** JSON bodies are pre-serialised so cached replies cost nothing to send. */
	body?: string | Buffer;
	/** Whether the body is JSON (the malformed-body fault only applies to JSON). */
	json?: boolean;
}

/** A route that wrote the response itself (server-sent events). */
export const STREAMED = Symbol('streamed');
export type RouteResult = Reply | typeof STREAMED;

export interface RequestContext {
	req: IncomingMessage;
	res: ServerResponse;
	method: string;
	/** Path without the query string. */
	path: string;
	query: string;
	/** The fault a sequence chose for this request: null for none, undefined when the rates decide. */
	scripted?: RequestFaultKind | null;
	/** Set by a route that applied a fault itself (a chat stream), for the request log. */
	fault?: FaultKind;
	/** Reads the body as JSON: `{ ok: false }` when it is not JSON. */
	readJson(): Promise<{ ok: true; value: unknown } | { ok: false; reason: string }>;
}

export const JSON_HEADERS = { 'content-type': 'application/json' } as const;

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
	return {
		status,
		body: JSON.stringify(body),
		json: true,
		headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS,
	};
}

export function rawJson(status: number, body: string): Reply {
	return { status, body, json: true, headers: JSON_HEADERS };
}

const TITLES: Record<number, string> = {
	400: 'Bad Request',
	401: 'Unauthorized',
	403: 'Forbidden',
	404: 'Not Found',
	405: 'Method Not Allowed',
	409: 'Conflict',
	413: 'Payload Too Large',
	429: 'Too Many Requests',
	500: 'Internal Server Error',
	502: 'Bad Gateway',
	503: 'Service Unavailable',
};

/** RFC 7807 problem details, sent with `application/json` as the real API does. */
export function problem(
	status: number,
	detail: string,
	instance: string,
	headers?: Record<string, string>,
): Reply {
	return json(
		status,
		{ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, instance },
		headers,
	);
}

/** "field rule" for each zod issue, e.g. `webhook_url must be at most 2048 characters`. */
export function describeIssues(error: z.ZodError, input: unknown, prefix?: string): string {
	return issuesOf(error, input)
		.map(
			(issue) =>
				`${[prefix, issue.field].filter(Boolean).join('.') || 'body'}${issue.received === undefined ? '' : ` ${issue.received}`} ${issue.rule}`,
		)
		.join('; ');
}

export const MAX_BODY_BYTES = 10 * 1024 * 1024;

export class BodyTooLargeError extends Error {}

export async function readBody(req: IncomingMessage): Promise<string> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req) {
		const buffer = chunk as Buffer;
		size += buffer.length;
		if (size > MAX_BODY_BYTES)
			throw new BodyTooLargeError(`The body exceeds ${MAX_BODY_BYTES} bytes.`);
		chunks.push(buffer);
	}
	return Buffer.concat(chunks).toString('utf8');
}

export function headerValue(req: IncomingMessage, name: string): string | undefined {
	const value = req.headers[name];
	return Array.isArray(value) ? value[0] : value;
}

/** The page/page_size query values as numbers where they look like integers, so the schema names the rule. */
export function pageQuery(query: string): Record<string, unknown> {
	const result: Record<string, unknown> = {};
	if (!query) return result;
	const params = new URLSearchParams(query);
	for (const name of ['page', 'page_size']) {
		const value = params.get(name);
		if (value === null) continue;
		result[name] = /^-?\d+$/.test(value.trim()) ? Number(value) : value;
	}
	return result;
}
