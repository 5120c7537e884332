import type { Logger } from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import { withLogContext } from '../slack/log';
import type { Container } from './container';
import { errorSummary } from '../slack/errors';
import type { UnfinishedRequest } from '../state/job-metadata';
import { inflightLease, type SharedState } from '../state/shared-state';
import type { InflightRequest, StateFile } from '../state/state-file';

/**
 * Restart recovery: what a start (`recoverUnfinishedWork`) or, with several replicas, the sweep
 * (`takeOverStoppedReplicas`) does with the work a stopped process left, from what was recorded:
 * each unfinished request resumed alone (its job followed again or delivered), its images redone,
 * its answers flagged interrupted.
 */

/**
 * Several replicas: every poll interval, resume the recorded requests no replica creates or follows
 * any more (their holder died and its leases expired), as a start does: one read per job, one
 * listing of its endpoint per lost create; redo the images and flag the answers a dead replica left
 * under way. Requests a live replica holds cost a look at its lease, nothing asked of the service.
 */
export async function takeOverStoppedReplicas(
	workspace: (team: string) => Promise<Container | undefined>,
	sources: RecoverySources & {
		clock: Clock;
		intervalMs: number;
		resumeWindowHours: number;
		signal: AbortSignal;
	},
): Promise<void> {
	const { shared, clock, intervalMs, resumeWindowHours, signal, logger } = sources;
	while (!signal.aborted) {
		try {
			await clock.sleep(intervalMs, signal);
		} catch {
			return;
		}
		await withLogContext({ request: undefined, job: undefined }, async () => {
			try {
				const taken = await takeOverInflight(workspace, shared, logger);
				if (taken)
					logger.info(`Took over ${taken} image(s) or answer(s) from replicas that stopped.`);
				const records = await shared.unfinishedRequests(clock.now() - resumeWindowHours * 3600_000);
				const { running, ended } = await resumeRecorded(records, workspace, logger, signal);
				if (running || ended)
					logger.info(
						`Took over ${running} running job(s) and delivered ${ended} from replicas that stopped.`,
					);
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
		await takeOverInflight(workspace, shared, logger);
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
	const outcomes = await resumeRecorded(records, workspace, logger, signal);
	if (outcomes.running || outcomes.ended)
		logger.info(
			`Resumed ${outcomes.running} running job(s); delivered ${outcomes.ended} finished while the app was away.`,
		);
}

/**
 * Resumes each recorded request in its own workspace (built for it), a few at a time, oldest first;
 * each organization's budget paces its own. Resolves with how many of each outcome.
 */
async function resumeRecorded(
	records: readonly UnfinishedRequest[],
	workspace: (team: string) => Promise<Container | undefined>,
	logger: Logger,
	signal: AbortSignal,
): Promise<Record<'running' | 'ended' | 'held' | 'finished', number>> {
	const outcomes = { running: 0, ended: 0, held: 0, finished: 0 };
	let next = 0;
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
	return outcomes;
}

/** Recorded requests resumed at once after a restart. */
const RESUME_CONCURRENCY = 8;

/** The workspaces' services, built as needed; one that cannot be built is logged and left out. */
async function builtFor(
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

/** Takes over the recorded images and answers whose replica died, each in its own workspace; resolves with how many. */
async function takeOverInflight(
	workspace: (team: string) => Promise<Container | undefined>,
	shared: SharedState,
	logger: Logger,
): Promise<number> {
	const recorded = await shared.inflightRequests();
	const containers = await builtFor(
		[...new Set(recorded.map((request) => request.team))],
		workspace,
		logger,
	);
	const byTeam = new Map(containers.map((container) => [container.team, container]));
	let taken = 0;
	for (const request of recorded) {
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
