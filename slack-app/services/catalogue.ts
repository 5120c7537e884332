import type { ManagementClient } from '../../shared/client';
import type { Clock } from '../../shared/clock';
import { NotFoundError } from '../../shared/errors';
import type { InferenceEndpoint } from '../../shared/schemas';

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
    if (this.cached && this.clock.now() - this.cached.at < this.ttlMs) return this.cached.items;
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
  async exists(name: string): Promise<boolean> {
    const items = await this.all().catch(() => undefined);
    if (items?.some((endpoint) => endpoint.name === name)) return true;
    try {
      await this.management.endpoints.get(name);
      return true;
    } catch (error) {
      if (error instanceof NotFoundError) return false;
      throw error;
    }
  }
}
