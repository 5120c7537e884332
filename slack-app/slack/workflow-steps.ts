import type { Logger, webApi } from '@slack/bolt';
import type { Job } from '../../shared/schemas';
import { failureDetail } from '../messages/results';
import { slackErrorCode, errorSummary } from './errors';

type WebClient = webApi.WebClient;

/** The step's outputs, as manifest.yaml declares them for `run_gpu_job` (and `transcribe_file`, with `transcript`). */
export type JobStepOutputs = Record<'job_id' | 'status' | 'output', string> & {
	transcript?: string;
};

/** Slack's answers when the step is no longer waiting: completed before (a redelivery), or timed out. */
const NOT_WAITING = new Set(['execution_not_in_running_state', 'function_execution_not_found']);

/**
 * Workflow Builder steps (https://docs.slack.dev/tools/bolt-js/concepts/custom-steps) whose work
 * outlives the `function_executed` event: a job ends minutes or hours later, perhaps after a
 * restart or on another replica, so the step is completed with the workspace's bot token
 * (functions.completeSuccess and completeError need no scope) when the job's result is delivered,
 * which happens once.
 */
export class WorkflowSteps {
	constructor(
		private readonly client: WebClient,
		private readonly logger: Logger,
	) {}

	/**
	 * Completes the step with the job's end: outputs when it succeeded (a transcription's text as
	 * well), the reason otherwise.
	 */
	async jobEnded(step: string, job: Job, kind: 'job' | 'transcribe' = 'job'): Promise<void> {
		try {
			if (job.status === 'succeeded')
				await this.client.functions.completeSuccess({
					function_execution_id: step,
					outputs:
						kind === 'transcribe'
							? { ...jobStepOutputs(job), transcript: transcriptOf(job) }
							: jobStepOutputs(job),
				});
			else
				await this.client.functions.completeError({
					function_execution_id: step,
					error:
						job.status === 'cancelled'
							? `The GPU job ${job.id} was cancelled.`
							: `The GPU job ${job.id} failed: ${failureDetail(job.output)}`,
				});
		} catch (error) {
			const code = slackErrorCode(error);
			if (!code || !NOT_WAITING.has(code)) throw error;
			this.logger.info(`Workflow step ${step} was not waiting any more (${errorSummary(error)}).`);
		}
	}
}

/** A transcription's text (empty when it returned a file instead). */
function transcriptOf(job: Job): string {
	const output: unknown = job.output;
	return output && typeof output === 'object' && 'text' in output && typeof output.text === 'string'
		? output.text
		: '';
}

export function jobStepOutputs(job: Job): JobStepOutputs {
	const output = job.output;
	return {
		job_id: job.id,
		status: job.status,
		output: typeof output === 'string' ? output : JSON.stringify(output ?? null),
	};
}
