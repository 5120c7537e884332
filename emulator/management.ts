import { randomUUID } from 'node:crypto';
import {
	createJobRequestSchema,
	createQueueRequestSchema,
	pageQuerySchema,
	uuidSchema,
	type Queue,
} from '../shared/schemas';
import type { Catalogue } from './endpoints/catalogue';
import {
	describeIssues,
	headerValue,
	json,
	pageQuery,
	problem,
	rawJson,
	type Reply,
	type RequestContext,
} from './http';
import type { JobStore } from './jobs';
import type { OrganizationConfig, ResolvedOptions } from './options';
import type { RateLimiter } from './rate-limit';

export const MANAGEMENT_PREFIX = '/api/public';
const DEFAULT_PAGE_SIZE = 25;

/** One organization's own state: what its key may see and change, and nothing else. */
export interface OrganizationState {
	config: OrganizationConfig;
	catalogue: Catalogue;
	jobs: JobStore;
}

interface ManagementDeps {
	options: ResolvedOptions;
	/** Every organization, the first one first. */
	organizations: readonly OrganizationState[];
	rateLimiter: RateLimiter;
}

interface Scope extends OrganizationState {
	queues: Map<string, Queue>;
}

function methodNotAllowed(allowed: string, instance: string): Reply {
	return problem(405, `This path accepts ${allowed.split(', ').join(' or ')} only.`, instance, {
		allow: allowed,
	});
}

/** The management API under /api/public: auth, per-key rate limit, then the routes of the interface document. */
export function createManagementRoutes(deps: ManagementDeps) {
	const { options, rateLimiter } = deps;
	const byKey = new Map<string, Scope>(
		deps.organizations.map((org) => [
			org.config.apiKey,
			{ ...org, queues: new Map<string, Queue>() },
		]),
	);

	async function readBody(ctx: RequestContext, instance: string) {
		const body = await ctx.readJson();
		if (!body.ok)
			return {
				ok: false as const,
				reply: problem(400, `The request body is not valid JSON: ${body.reason}`, instance),
			};
		return { ok: true as const, value: body.value };
	}

	function parsePage(query: string, instance: string): { page: number; pageSize: number } | Reply {
		const raw = pageQuery(query);
		const parsed = pageQuerySchema.safeParse(raw);
		if (!parsed.success) return problem(400, describeIssues(parsed.error, raw), instance);
		return { page: parsed.data.page ?? 1, pageSize: parsed.data.page_size ?? DEFAULT_PAGE_SIZE };
	}

	async function jobsRoute(
		ctx: RequestContext,
		{ catalogue, jobs }: Scope,
		endpointName: string,
		instance: string,
	): Promise<Reply> {
		const endpoint = catalogue.endpoint(endpointName);
		if (!endpoint)
			return problem(404, `Inference endpoint "${endpointName}" was not found.`, instance);
		if (ctx.method === 'POST') {
			const body = await readBody(ctx, instance);
			if (!body.ok) return body.reply;
			const parsed = createJobRequestSchema.safeParse(body.value);
			if (!parsed.success) return problem(400, describeIssues(parsed.error, body.value), instance);
			return json(201, jobs.create(endpoint, parsed.data));
		}
		if (ctx.method === 'GET') {
			const paging = parsePage(ctx.query, instance);
			if ('status' in paging) return paging;
			const { items, total } = jobs.page(endpointName, paging.page, paging.pageSize);
			return json(200, { items, page: paging.page, page_size: paging.pageSize, total_size: total });
		}
		return methodNotAllowed('GET, POST', instance);
	}

	function jobRoute(
		ctx: RequestContext,
		{ catalogue, jobs }: Scope,
		endpointName: string,
		jobId: string,
		instance: string,
	): Reply {
		if (ctx.method !== 'GET' && ctx.method !== 'DELETE')
			return methodNotAllowed('GET, DELETE', instance);
		if (!catalogue.endpoint(endpointName))
			return problem(404, `Inference endpoint "${endpointName}" was not found.`, instance);
		const id = uuidSchema.safeParse(jobId);
		if (!id.success) return problem(400, describeIssues(id.error, jobId, 'job_id'), instance);
		if (ctx.method === 'GET') {
			const job = jobs.get(endpointName, jobId);
			return job
				? json(200, job)
				: problem(
						404,
						`Job ${jobId} was not found on inference endpoint "${endpointName}".`,
						instance,
					);
		}
		const outcome = jobs.cancel(endpointName, jobId);
		if (!outcome)
			return problem(
				404,
				`Job ${jobId} was not found on inference endpoint "${endpointName}".`,
				instance,
			);
		if (outcome === 'finished') {
			return problem(
				409,
				`Job ${jobId} has already finished (${jobs.get(endpointName, jobId)?.status}) and cannot be cancelled.`,
				instance,
			);
		}
		return { status: 202 };
	}

	async function queueRoute(
		ctx: RequestContext,
		{ config, queues }: Scope,
		project: string,
		instance: string,
	): Promise<Reply> {
		if (ctx.method !== 'POST') return methodNotAllowed('POST', instance);
		if (project !== config.project) {
			return problem(
				404,
				`Project "${project}" was not found in organization "${config.name}".`,
				instance,
			);
		}
		const body = await readBody(ctx, instance);
		if (!body.ok) return body.reply;
		const parsed = createQueueRequestSchema.safeParse(body.value);
		if (!parsed.success) return problem(400, describeIssues(parsed.error, body.value), instance);
		const request = parsed.data;
		if (queues.has(request.name)) {
			return problem(
				409,
				`A queue named "${request.name}" already exists in project "${project}".`,
				instance,
			);
		}
		const now = new Date(options.clock.now()).toISOString();
		const queue: Queue = {
			id: randomUUID(),
			name: request.name,
			display_name: request.display_name ?? request.name,
			container_groups: [],
			create_time: now,
			update_time: now,
			current_queue_length: 0,
		};
		if (request.description !== undefined) queue.description = request.description;
		queues.set(queue.name, queue);
		return json(201, queue);
	}

	async function route(
		ctx: RequestContext,
		scope: Scope,
		segments: readonly string[],
		instance: string,
	): Promise<Reply> {
		const { config, catalogue } = scope;
		// segments: organizations / {org} / ...
		const [root, organization, kind, name, sub, id, ...extra] = segments;
		if (root !== 'organizations' || !organization || !kind || extra.length > 0) {
			return problem(404, 'No such path in the management API.', instance);
		}
		// The caller must be a member of the organization in the path (interface document §5): a key of
		// another organization is refused as a non-member, whether or not that organization exists.
		if (organization !== config.name) {
			return problem(
				403,
				`The API key is not a member of organization "${organization}".`,
				instance,
			);
		}
		if (kind === 'webhook-secret-key' && name === undefined) {
			if (ctx.method !== 'GET') return methodNotAllowed('GET', instance);
			return json(200, { secret_key: config.webhookSecret });
		}
		if (kind === 'inference-endpoints') {
			if (name === undefined) {
				if (ctx.method !== 'GET') return methodNotAllowed('GET', instance);
				const paging = parsePage(ctx.query, instance);
				return 'status' in paging
					? paging
					: rawJson(200, catalogue.pageJson(paging.page, paging.pageSize));
			}
			if (sub === undefined) {
				if (ctx.method !== 'GET') return methodNotAllowed('GET', instance);
				const item = catalogue.itemJson(name);
				return item
					? rawJson(200, item)
					: problem(404, `Inference endpoint "${name}" was not found.`, instance);
			}
			if (sub === 'jobs')
				return id === undefined
					? jobsRoute(ctx, scope, name, instance)
					: jobRoute(ctx, scope, name, id, instance);
		}
		if (kind === 'projects' && name !== undefined && sub === 'queues' && id === undefined)
			return queueRoute(ctx, scope, name, instance);
		return problem(404, 'No such path in the management API.', instance);
	}

	return async function handle(ctx: RequestContext): Promise<Reply> {
		const instance = ctx.path;
		const key = headerValue(ctx.req, 'service-api-key');
		if (!key) return problem(401, 'The Service-Api-Key header is missing.', instance);
		const scope = byKey.get(key);
		if (!scope)
			return problem(401, 'The Service-Api-Key header does not hold a valid API key.', instance);
		const wait = rateLimiter.admit(key, options.clock.now());
		if (wait > 0) {
			return problem(
				429,
				`More than ${options.rateLimitPerMinute} requests in 60 seconds for this API key; retry in ${wait} s.`,
				instance,
				{
					'retry-after': String(wait),
				},
			);
		}
		let segments: string[];
		try {
			segments = ctx.path
				.slice(MANAGEMENT_PREFIX.length + 1)
				.split('/')
				.map(decodeURIComponent);
		} catch {
			return problem(400, 'The path is not validly percent-encoded.', instance);
		}
		return route(ctx, scope, segments, instance);
	};
}
