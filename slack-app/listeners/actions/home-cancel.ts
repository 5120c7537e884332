import type {
	AllMiddlewareArgs,
	BlockAction,
	ButtonAction,
	SlackActionMiddlewareArgs,
} from '@slack/bolt';
import { decodeValue, jobRefSchema } from '../../messages/actions';
import type { AppServices } from '../../features';

/**
 * Cancel on the Home tab. The tab has no channel; the one the job was asked in comes from the
 * app's own record of the person's requests, never from the button, so the channel allow-list holds.
 */
export function homeCancel(services: AppServices) {
	return async ({
		ack,
		body,
		action,
	}: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> => {
		await ack();
		const user = body.user.id;
		const job = decodeValue(jobRefSchema, action.value);
		const channel = job ? services.home.channelOfJob(user, job) : undefined;
		if (!job || !channel) {
			await services.home.notify(
				user,
				'That job is no longer in your recent requests; cancel it from its thread.',
			);
			return;
		}
		const reply = await services.jobs.cancel({ user, channel }, job.jobId, job.endpoint);
		await services.home.notify(user, reply?.text ?? `Cancelling job ${job.jobId}.`);
	};
}
