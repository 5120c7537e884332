import { LIMITS, pageNumberSchema, pageSizeSchema } from './schemas';
import { parseOrThrow } from './validation';

/** One page of a management API listing (catalogue, an endpoint's jobs). */
export interface ListPage<T> {
	items: readonly T[];
	page: number;
	page_size: number;
	total_size: number;
}

/** Reads one page; the client's `list` methods have this shape. */
export type PageReader<T> = (
	query: { page: number; page_size: number },
	options: { signal?: AbortSignal; background?: boolean },
) => Promise<ListPage<T>>;

export interface PagingOptions {
	/** Items per request, 1-100. Default 100: the fewest requests for a whole listing. */
	pageSize?: number;
	/** The page to start at. Default 1. */
	firstPage?: number;
	/** Stop after this many requests even when more pages remain. Default: no limit. */
	maxPages?: number;
	signal?: AbortSignal;
	/** Catching up (a restart's recovery): waits while the key's budget has other callers. */
	background?: boolean;
}

/**
 * The pages of a listing, from `firstPage` on, each read only when the caller asks for it: a
 * `break` (or `return`) out of `for await` sends no further request. Ends at the first page that is
 * short or empty or reaches `total_size`.
 */
export function pages<T>(
	read: PageReader<T>,
	options: PagingOptions = {},
): AsyncIterable<ListPage<T>> {
	const pageSize = parseOrThrow(
		pageSizeSchema,
		options.pageSize ?? LIMITS.pageSizeMax,
		'page size',
	);
	const firstPage = parseOrThrow(pageNumberSchema, options.firstPage ?? 1, 'first page');
	const maxPages = options.maxPages ?? Number.POSITIVE_INFINITY;
	return {
		async *[Symbol.asyncIterator]() {
			for (let page = firstPage; page < firstPage + maxPages; page++) {
				const result = await read(
					{ page, page_size: pageSize },
					{ signal: options.signal, background: options.background },
				);
				yield result;
				const last =
					result.items.length < pageSize ||
					page * pageSize >= result.total_size ||
					page >= LIMITS.pageMax;
				if (last) return;
			}
		},
	};
}

/** Every item of a listing in the service's order, reading pages as the caller iterates (see `pages`). */
export function paginate<T>(read: PageReader<T>, options: PagingOptions = {}): AsyncIterable<T> {
	const source = pages(read, options);
	return {
		async *[Symbol.asyncIterator]() {
			for await (const page of source) yield* page.items;
		},
	};
}
