import {
	LIMITS,
	NotFoundError,
	isTerminalStatus,
	pages,
	type Job,
	type ListPage,
	type ManagementClient,
} from '../../shared';

/**
 * Finds the jobs of one endpoint that ended since the last poll, each once, from the service's job
 * listing (`GET .../inference-endpoints/{name}/jobs?page=&page_size=`), which filters nothing.
 *
 * The listing is assumed newest first by creation time, append-only (the interface document does
 * not state an order; the emulator lists this way). A job ends long after it is created, so a
 * creation-time cursor alone would miss it: the cursor is
 *  - `newest`: the creation time of the newest job seen and the ids created at that instant, so the
 *    jobs created since are the first ones of the listing, read until an older job shows;
 *  - `open`: the jobs seen unfinished, each with its ordinal (its place counted from the oldest job,
 *    which a newest-first, append-only listing never changes): from `total_size` the page holding it
 *    now is known, so it is read directly, without the pages in between. One not on its page (the
 *    listing changed under the poll) is read by id.
 * Requests per poll and endpoint: ceil((jobs created since + 1) / 100) pages, plus one page for
 * each page holding older unfinished jobs (at most the listing's page count), plus a read by id for
 * an unfinished job that moved; when nothing changed and nothing is unfinished, one.
 */

/** Unfinished jobs followed per trigger node; past it the oldest are dropped (~50 bytes each). */
export const MAX_OPEN_JOBS = 10_000;
/** Pages read at the first poll to find the unfinished jobs to follow: the newest 1,000 jobs. */
export const FIRST_POLL_PAGES = 10;
const PAGE_SIZE = LIMITS.pageSizeMax;

/** One endpoint's cursor, as flat strings: n8n stores and reloads it with the workflow. */
export interface EndpointCursor {
	/** "<create time> <id> <id>...": the newest creation time seen and the jobs created then. */
	newest: string;
	/** "<ordinal> <id>" of each unfinished job followed. */
	open: string[];
}

export interface PollResult {
	/** Jobs that ended since the cursor, in one of the statuses asked for, oldest ending first. */
	ended: Job[];
	cursor: EndpointCursor;
}

interface Horizon {
	time: number;
	ids: Set<string>;
}

function readHorizon(newest: string): Horizon | undefined {
	const [time, ...ids] = newest.split(' ');
	const parsed = Date.parse(time ?? '');
	return Number.isFinite(parsed) ? { time: parsed, ids: new Set(ids) } : undefined;
}

function readOpen(open: readonly string[]): Map<string, number> {
	const jobs = new Map<string, number>();
	for (const entry of open) {
		const [ordinal, id] = entry.split(' ');
		if (id && Number.isInteger(Number(ordinal))) jobs.set(id, Number(ordinal));
	}
	return jobs;
}

/** The job's place counted from the oldest job of the listing, from where a page shows it. */
function ordinalOf(page: ListPage<Job>, index: number): number {
	return page.total_size - 1 - ((page.page - 1) * page.page_size + index);
}

/** Whether a job was created after everything the cursor has seen. */
function isNewer(job: Job, horizon: Horizon | undefined): boolean {
	if (!horizon) return true;
	const created = Date.parse(job.create_time);
	return created > horizon.time || (created === horizon.time && !horizon.ids.has(job.id));
}

export async function pollEndpoint(
	client: ManagementClient,
	endpoint: string,
	cursor: EndpointCursor | undefined,
	statuses: ReadonlySet<string>,
	signal?: AbortSignal,
): Promise<PollResult> {
	const horizon = cursor ? readHorizon(cursor.newest) : undefined;
	const open = readOpen(cursor?.open ?? []);
	const firstPoll = cursor === undefined;
	const ended: Job[] = [];
	const stillOpen = new Map<string, number>();
	let newest = horizon;

	const observe = (job: Job, ordinal: number) => {
		const wasOpen = open.delete(job.id);
		if (!wasOpen && !isNewer(job, horizon)) return;
		const created = Date.parse(job.create_time);
		if (!newest || created > newest.time) newest = { time: created, ids: new Set([job.id]) };
		else if (created === newest.time) newest.ids.add(job.id);
		if (!isTerminalStatus(job.status)) stillOpen.set(job.id, ordinal);
		// The first poll only learns what is under way: jobs that ended before it are not news.
		else if (!firstPoll && statuses.has(job.status)) ended.push(job);
	};

	// The jobs created since the last poll come first: read until a job the cursor knows shows.
	const read = new Set<number>();
	let total = 0;
	for await (const page of pages((query, options) => client.jobs.list(endpoint, query, options), {
		pageSize: PAGE_SIZE,
		maxPages: firstPoll ? FIRST_POLL_PAGES : undefined,
		signal,
	})) {
		read.add(page.page);
		total = Math.max(total, page.total_size);
		page.items.forEach((job, index) => observe(job, ordinalOf(page, index)));
		if (!firstPoll && page.items.some((job) => !isNewer(job, horizon))) break;
	}

	// Older unfinished jobs: the pages holding them now, each read once.
	const byPage = new Map<number, string[]>();
	for (const [id, ordinal] of open) {
		const page = Math.floor((total - 1 - ordinal) / PAGE_SIZE) + 1;
		if (page < 1 || read.has(page)) continue;
		byPage.set(page, [...(byPage.get(page) ?? []), id]);
	}
	for (const page of [...byPage.keys()].sort((a, b) => a - b)) {
		const listed = await client.jobs.list(endpoint, { page, page_size: PAGE_SIZE }, { signal });
		listed.items.forEach((job, index) => {
			if (open.has(job.id)) observe(job, ordinalOf(listed, index));
		});
	}

	// Any still missing moved in the listing: read by id; one that no longer exists is dropped.
	for (const [id, ordinal] of [...open]) {
		const job = await client.jobs
			.get(endpoint, id, { signal })
			.catch((error: unknown) =>
				error instanceof NotFoundError ? undefined : Promise.reject(error),
			);
		if (job) observe(job, ordinal);
		else open.delete(id);
	}

	ended.sort((a, b) => Date.parse(a.update_time) - Date.parse(b.update_time));
	const latest = newest;
	return {
		ended,
		cursor: {
			newest: latest ? [new Date(latest.time).toISOString(), ...latest.ids].join(' ') : '',
			open: [...stillOpen].map(([id, ordinal]) => `${ordinal} ${id}`),
		},
	};
}

/** Bounds every endpoint's followed jobs together, keeping the newest (highest ordinal) of each. */
export function boundOpenJobs(cursors: Record<string, EndpointCursor>): void {
	const total = Object.values(cursors).reduce((sum, cursor) => sum + cursor.open.length, 0);
	if (total <= MAX_OPEN_JOBS) return;
	const share = Math.floor(MAX_OPEN_JOBS / Object.keys(cursors).length);
	for (const cursor of Object.values(cursors)) {
		if (cursor.open.length <= share) continue;
		cursor.open = [...cursor.open]
			.sort((a, b) => Number(b.split(' ')[0]) - Number(a.split(' ')[0]))
			.slice(0, share);
	}
}
