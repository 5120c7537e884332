import type { InferenceEndpoint } from '../../shared/schemas';
import type { ListedEndpoint } from '../options';
import { stableUuid } from '../determinism';
import { formShapeEndpoints } from './form-shapes';
import { mediaEndpoints } from './media';
import { textEndpoints } from './text-tools';
import { transcribeEndpoint } from './transcribe';
import type { Endpoint } from './types';

const ENDPOINTS: readonly Endpoint[] = [
	transcribeEndpoint,
	...mediaEndpoints,
	...textEndpoints,
	...formShapeEndpoints,
];

/** Every endpoint the emulator serves, by name (what `inputSchemas` may name). */
export const ENDPOINT_NAMES: ReadonlySet<string> = new Set(ENDPOINTS.map(({ name }) => name));

interface Entry {
	/** What runs the endpoint's jobs; none for an endpoint that is only listed. */
	endpoint?: Endpoint;
	item: InferenceEndpoint;
	json: string;
}

/**
 * The seeded inference endpoints. Everything here is fixed after start, so item and page replies
 * are serialised once and reused: this is the management API's hot path.
 */
export class Catalogue {
	private readonly entries: Entry[];
	private readonly byName = new Map<string, Entry>();
	private readonly pages = new Map<string, string>();

	/**
	 * `inputSchemas`: what to publish as `input_schema` instead of an endpoint's own, by name;
	 * `listed`: endpoints listed after the emulator's own, without jobs.
	 */
	constructor(
		organization: string,
		inputSchemas: Readonly<Record<string, string>> = {},
		listed: readonly ListedEndpoint[] = [],
	) {
		const own: Entry[] = ENDPOINTS.map((endpoint) => {
			const item: InferenceEndpoint = {
				id: stableUuid(`endpoint:${endpoint.name}`),
				name: endpoint.name,
				organization_name: organization,
				display_name: endpoint.display_name,
				description: endpoint.description,
				readme: endpoint.readme,
				price_description: endpoint.price_description,
				icon_url: `https://static.example.com/gpu-cloud/icons/${endpoint.name}.svg`,
				input_schema: inputSchemas[endpoint.name] ?? endpoint.inputSchemaJson,
				output_schema: endpoint.outputSchemaJson,
			};
			return { endpoint, item, json: JSON.stringify(item) };
		});
		const others: Entry[] = listed.map((endpoint) => {
			const item: InferenceEndpoint = { ...endpoint, organization_name: organization };
			return { item, json: JSON.stringify(item) };
		});
		this.entries = [...own, ...others];
		for (const entry of this.entries) this.byName.set(entry.item.name, entry);
	}

	get size(): number {
		return this.entries.length;
	}

	get items(): readonly InferenceEndpoint[] {
		return this.entries.map((entry) => entry.item);
	}

	endpoint(name: string): Endpoint | undefined {
		return this.byName.get(name)?.endpoint;
	}

	itemJson(name: string): string | undefined {
		return this.byName.get(name)?.json;
	}

	/** The page object of the interface document; pages past the end are empty but keep total_size. */
	pageJson(page: number, pageSize: number): string {
		const key = `${page}:${pageSize}`;
		const cached = this.pages.get(key);
		if (cached !== undefined) return cached;
		const start = (page - 1) * pageSize;
		const items =
			start < this.entries.length
				? this.entries.slice(start, start + pageSize).map((entry) => entry.json)
				: [];
		const json = `{"items":[${items.join(',')}],"page":${page},"page_size":${pageSize},"total_size":${this.entries.length}}`;
		// Only pages that can hold items are worth keeping; far-off page numbers would grow the cache without bound.
		if (start <= this.entries.length) this.pages.set(key, json);
		return json;
	}
}
