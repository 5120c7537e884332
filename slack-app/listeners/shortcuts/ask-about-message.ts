import type { AllMiddlewareArgs, MessageShortcut, SlackShortcutMiddlewareArgs } from '@slack/bolt';
import { askModal } from '../../messages/ask';
import type { AppServices } from '../../features';
import { plainText } from '../../features/conversation';

/**
 * The message shortcut "Ask GPU Cloud about this message": a form for the question, the message
 * quoted (as plain words: Slack's escapes and mention markup undone, escaped again when shown).
 */
export function askAboutMessageShortcut(services: AppServices) {
	return async ({
		ack,
		shortcut,
		client,
	}: SlackShortcutMiddlewareArgs<MessageShortcut> & AllMiddlewareArgs): Promise<void> => {
		await ack();
		const denial = services.access.check(shortcut.user.id, shortcut.channel.id);
		const view = askModal(
			{ channel: shortcut.channel.id, message: plainText(shortcut.message.text ?? '') },
			denial ? `${denial.reason} ${denial.hint} ${services.access.settings.contact}.` : undefined,
		);
		await client.views.open({ trigger_id: shortcut.trigger_id, view });
	};
}
