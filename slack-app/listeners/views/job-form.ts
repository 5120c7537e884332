import type { AllMiddlewareArgs, SlackViewMiddlewareArgs, ViewSubmitAction } from '@slack/bolt';
import { readJobFormValues } from '../../features/job-form';
import type { AppServices } from '../../features';

/** Submit of the job form: field errors keep it open; otherwise it closes and the job starts. */
export function submitJobForm(services: AppServices) {
	return async ({
		ack,
		body,
		view,
		client,
	}: SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs): Promise<void> => {
		const result = await services.jobForm.check(
			view.private_metadata,
			readJobFormValues(view.state),
		);
		if (!result.ok) {
			await ack({ response_action: 'errors', errors: result.errors });
			return;
		}
		await ack();
		const context = { user: body.user.id, channel: result.context.channel };
		const reply = await services.jobs.run(context, result.endpoint, result.input, {
			userMetadata: result.metadata,
			prepare: result.prepare,
		});
		// A view submission has no response_url: a private answer goes out as an ephemeral message.
		if (reply)
			await client.chat.postEphemeral({
				channel: context.channel,
				user: context.user,
				text: reply.text,
				blocks: reply.blocks,
			});
	};
}
