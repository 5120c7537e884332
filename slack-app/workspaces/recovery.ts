import type { Logger } from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import { withLogContext } from '../slack/log';
import type { Container } from './container';
import { errorSummary } from '../slack/errors';
import type { UnfinishedRequest } from '../state/job-metadata';
import { inflightLease, type SharedState } from '../state/shared-state';
import type { InflightRequest, StateFile } from '../state/state-file';

/**
 * Restart recovery: what a start (`recoverUnfinishedWork`: each recorded unfinished request
 * resumed alone) or, with several replicas, the sweep (`takeOverStoppedReplicas`: the endpoints of
 * the workspaces with recorded work listed) does with the work a stopped process left: its jobs
 * followed again (or delivered), its images redone, its answers flagged interrupted.
 */

/**
 * Several replicas: every poll interval, follow the jobs no replica follows any more (their holder
 * died and its leases expired) and deliver finished ones nobody delivered; redo the images and flag
 * the answers a dead replica left under way.
 */
export async function takeOverStoppedReplicas(
	containers: () => Promise<Container[]>,
	shared: SharedState,
	clock: Clock,
	intervalMs: number,
	signal: AbortSignal,
	logger: Logger,
): Promise<void> {
	while (!signal.aborted) {
		try {
			await clock.sleep(intervalMs, signal);
		} catch {
			return;
		}
		await withLogContext({ request: undefined, job: undefined }, async () => {
			try {
				const all = await containers();
				for (const container of all)
					await recoverJobs(
						container,
						logger,
						(watching, delivered) =>
							`Took over ${watching} running job(s) and delivered ${delivered} from replicas that stopped.`,
					);
				const taken = await takeOverInflight(all, shared, logger);
				if (taken)
					logger.info(`Took over ${taken} image(s) or answer(s) from replicas that stopped.`);
			} catch (error) {
				logger.warn(`Could not look for work other replicas left: ${errorSummary(error)}`);
			}
		});
	}
}

export interface RecoverySources {
	/** Where images and answers under way are recorded: this state file (one process), or Redis. */
	shared: SharedState;
	logger: Logger;
}

/**
 * Before a restart's recovery: this process's records of requests under way written by an older
 * version name no workspace; they are the workspace's when the app serves one (`teams`: the
 * workspaces served, two at most are needed), dropped with a warning otherwise.
 */
export async function ownOlderRecords(
	state: StateFile,
	teams: () => Promise<readonly string[]>,
	logger: Logger,
): Promise<void> {
	try {
		const dropped = await state.ownUnmarked(await teams());
		if (dropped)
			logger.warn(
				`${dropped} image or answer cut short before a restart was dropped: the state file does not say which workspace it belongs to (written by an older version), and the app serves several.`,
			);
	} catch (error) {
		logger.warn(`Could not resume interrupted images and answers: ${errorSummary(error)}`);
	}
}

/**
 * After a restart: the work recorded as unfinished, and only it. Every image or answer under way
 * that nobody holds any more is redone or flagged in its own workspace; then every recorded
 * request left unfinished, across workspaces and oldest first, is resumed in its own workspace
 * (built for it): one read of its job, or one listing of its endpoint when the create's reply was
 * lost. A workspace with nothing recorded costs nothing. Those service requests go in the
 * background of each organization's budget, so users' new commands never wait behind them.
 */
export async function recoverUnfinishedWork(
	workspace: (team: string) => Promise<Container | undefined>,
	sources: RecoverySources & { since: number; signal: AbortSignal },
): Promise<void> {
	const { shared, logger, since, signal } = sources;
	try {
		const teams = new Set((await shared.inflightRequests()).map((request) => request.team));
		const containers = await builtFor([...teams], workspace, logger);
		await takeOverInflight(containers, shared, logger);
	} catch (error) {
		logger.warn(`Could not resume interrupted images and answers: ${errorSummary(error)}`);
	}
	let records: UnfinishedRequest[];
	try {
		records = await shared.unfinishedRequests(since);
	} catch (error) {
		logger.warn(`Could not look for unfinished jobs: ${errorSummary(error)}`);
		return;
	}
	const outcomes = { running: 0, ended: 0, held: 0, finished: 0 };
	let next = 0;
	// A few at a time, taken oldest first; each organization's budget paces its own.
	const resumeNext = async (): Promise<void> => {
		for (let record = records[next++]; record && !signal.aborted; record = records[next++]) {
			try {
				const container = await workspace(record.team);
				if (!container) continue;
				const resumed = record;
				const outcome = await withLogContext({ request: record.request }, () =>
					container.services.jobs.resumeRequest(resumed),
				);
				outcomes[outcome]++;
			} catch (error) {
				logger.warn(
					`Could not resume a request of ${record.team} left unfinished: ${errorSummary(error)}`,
				);
			}
		}
	};
	await Promise.all(Array.from({ length: RESUME_CONCURRENCY }, resumeNext));
	if (outcomes.running || outcomes.ended)
		logger.info(
			`Resumed ${outcomes.running} running job(s); delivered ${outcomes.ended} finished while the app was away.`,
		);
}

/** Recorded requests resumed at once after a restart. */
const RESUME_CONCURRENCY = 8;

/** The workspaces' services, built as needed; one that cannot be built is logged and left out. */
export async function builtFor(
	teams: readonly string[],
	workspace: (team: string) => Promise<Container | undefined>,
	logger: Logger,
): Promise<Container[]> {
	const containers: Container[] = [];
	for (const team of teams) {
		try {
			const container = await workspace(team);
			if (container) containers.push(container);
		} catch (error) {
			logger.error(`${team} is not served: ${errorSummary(error)}`);
		}
	}
	return containers;
}

/** Takes over the images and answers of these workspaces whose replica died; resolves with how many. */
async function takeOverInflight(
	containers: readonly Container[],
	shared: SharedState,
	logger: Logger,
): Promise<number> {
	const byTeam = new Map(containers.map((container) => [container.team, container]));
	let taken = 0;
	for (const request of await shared.inflightRequests()) {
		const container = byTeam.get(request.team);
		if (!container || !(await shared.takeOverInflight(request.ref))) continue;
		taken++;
		redoOrFlag(container, request, shared, logger);
	}
	return taken;
}

/** An image is generated again (and posted once); an answer is flagged interrupted, with Regenerate. */
function redoOrFlag(
	container: Container,
	request: InflightRequest,
	shared: SharedState,
	logger: Logger,
): void {
	void withLogContext({ request: request.ref }, async () => {
		if (request.kind === 'image') return container.services.images.redo(request);
		try {
			await container.services.chat.interrupted(request);
		} catch (error) {
			logger.warn(`Could not flag an interrupted answer: ${errorSummary(error)}`);
			// Another look (any replica's sweep) tries again; one process alone, its next start does.
			await shared.releaseLease(inflightLease(request.ref)).catch(() => undefined);
		}
	});
}

/** Follows the workspace's unfinished jobs again and delivers finished ones nobody delivered; says so when there were any. */
async function recoverJobs(
	container: Container,
	logger: Logger,
	found: (watching: number, delivered: number) => string,
): Promise<void> {
	const { watching, delivered } = await container.services.jobs.recoverJobs();
	if (watching || delivered) logger.info(found(watching, delivered));
}
