import type { AllMiddlewareArgs, GlobalShortcut, SlackShortcutMiddlewareArgs } from '@slack/bolt';
import type { AppServices } from '../../features';

/** The global shortcut "Run a GPU job": the job form, which then asks where to post the job. */
export function runJobShortcut(services: AppServices) {
	return async ({
		ack,
		shortcut,
		client,
	}: SlackShortcutMiddlewareArgs<GlobalShortcut> & AllMiddlewareArgs): Promise<void> => {
		await ack();
		// The channel is chosen in the form; the allow-lists are checked when it is submitted.
		await services.jobForm.open(client, shortcut.trigger_id, {});
	};
}
