import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { usageErrorMessage } from '../../messages/errors';
import { COMMAND, parseCommand } from '../../features/command-parser';
import type { AppServices } from '../../features';
import { ephemeral } from '../ephemeral';

/** `/gpu <subcommand>`: ack at once, parse, hand to the router, show any private reply. */
export function gpuCommand(services: AppServices) {
	return async ({
		command,
		ack,
		respond,
		client,
	}: SlackCommandMiddlewareArgs & AllMiddlewareArgs): Promise<void> => {
		await ack();
		const parsed = parseCommand(command.text);
		if (!parsed.ok) {
			await respond(ephemeral(usageErrorMessage(COMMAND, parsed.problem, parsed.subcommand)));
			return;
		}
		const context = { user: command.user_id, channel: command.channel_id };
		const reply = await services.router.handle(context, parsed.command, {
			client,
			triggerId: command.trigger_id,
		});
		if (reply) await respond(ephemeral(reply));
	};
}
