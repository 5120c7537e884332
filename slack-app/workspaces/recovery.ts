import type { Logger } from '@slack/bolt';
import type { Clock } from '../../shared/clock';
import { withLogContext } from '../slack/log';
import type { Container } from './container';
import { errorSummary } from '../slack/errors';
import { inflightLease, type SharedState } from '../state/shared-state';
import type { InflightRequest, StateFile } from '../state/state-file';

/**
 * Restart recovery: what a start (`recoverUnfinishedWork`) or, with several replicas, the sweep
 * (`takeOverStoppedReplicas`) does with the work a stopped process left: its jobs are rediscovered
 * and followed again (or delivered), its images redone, its answers flagged interrupted.
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
 * After a restart, for one workspace: follow its unfinished jobs again, redo its interrupted images,
 * flag its interrupted answers: every record of a request under way that nobody holds any more (this
 * process's before it stopped, or a dead replica's) is taken over, here as by the sweep.
 */
export async function recoverUnfinishedWork(
	container: Container,
	sources: RecoverySources,
): Promise<void> {
	const { shared, logger } = sources;
	try {
		await takeOverInflight([container], shared, logger);
	} catch (error) {
		logger.warn(`Could not resume interrupted images and answers: ${errorSummary(error)}`);
	}
	try {
		await recoverJobs(
			container,
			logger,
			(watching, delivered) =>
				`Resumed ${watching} running job(s); delivered ${delivered} finished while the app was away.`,
		);
	} catch (error) {
		logger.warn(`Could not look for unfinished jobs: ${errorSummary(error)}`);
	}
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
