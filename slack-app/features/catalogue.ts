import type { ManagementClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import { NotFoundError } from '../../shared/errors';
import type { InferenceEndpoint } from '../../shared/schemas';
import {
	describeInputSchema,
	inputSchemaProblems,
	parseInputSchema,
} from '../../shared/input-schema';

/** What the endpoint's published input_schema says is wrong with `input`, in one sentence for the user. */
export function inputProblem(endpoint: InferenceEndpoint, input: unknown): string | undefined {
	const schema = parseInputSchema(endpoint.input_schema);
	const problems = schema ? inputSchemaProblems(schema, input) : [];
	if (problems.length === 0) return undefined;
	const expects = describeInputSchema(schema);
	return `The input does not fit endpoint "${endpoint.name}": ${problems.join('; ')}.${expects ? ` It expects: ${expects}.` : ''}`;
}

/** The inference endpoint catalogue, cached briefly: paging buttons and the job form reuse it. */
export class Catalogue {
	private cached?: { at: number; items: InferenceEndpoint[] };
	private loading?: Promise<InferenceEndpoint[]>;

	constructor(
		private readonly management: ManagementClient,
		private readonly clock: Clock,
		private readonly ttlMs = 60_000,
	) {}

	async all(): Promise<InferenceEndpoint[]> {
		if (this.cached && this.fresh(this.cached)) return this.cached.items;
		this.loading ??= (async () => {
			try {
				const items: InferenceEndpoint[] = [];
				for await (const endpoint of this.management.endpoints.listAll()) items.push(endpoint);
				this.cached = { at: this.clock.now(), items };
				return items;
			} finally {
				this.loading = undefined;
			}
		})();
		return this.loading;
	}

	/**
	 * Whether the service has this endpoint: from the (shared, cached) catalogue, so a burst of
	 * commands costs one listing rather than a request each; asks for the one endpoint only when the
	 * list does not show it (it may be newer than the cache, or the listing may have failed).
	 */
	async find(name: string): Promise<InferenceEndpoint | undefined> {
		// An expired list that shows the endpoint answers at once while a new one is fetched: the
		// listing is paced with every other request to the key's budget, so while hundreds of creates
		// wait their turn it takes minutes, and each command checked against it would wait as long
		// before its user saw anything (a create for an endpoint removed since then fails on its own).
		const cached = this.cached;
		const known = cached?.items.find((endpoint) => endpoint.name === name);
		if (cached && known) {
			if (!this.fresh(cached)) void this.all().catch(() => undefined);
			return known;
		}
		const items = await this.all().catch(() => undefined);
		const listed = items?.find((endpoint) => endpoint.name === name);
		if (listed) return listed;
		try {
			return await this.management.endpoints.get(name);
		} catch (error) {
			if (error instanceof NotFoundError) return undefined;
			throw error;
		}
	}

	private fresh(cached: { at: number }): boolean {
		return this.clock.now() - cached.at < this.ttlMs;
	}

	async exists(name: string): Promise<boolean> {
		return (await this.find(name)) !== undefined;
	}
}
