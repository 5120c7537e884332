import type { AllMiddlewareArgs, SlackViewMiddlewareArgs, ViewSubmitAction } from '@slack/bolt';
import { z } from 'zod/v4';
import { ASK_FORM, askAboutMessagePrompt, askContextSchema } from '../../messages/ask';
import type { AppServices } from '../../features';

const questionStateSchema = z.looseObject({
	values: z.looseObject({
		[ASK_FORM.question.block]: z.looseObject({
			[ASK_FORM.question.action]: z.looseObject({ value: z.string().nullish() }),
		}),
	}),
});

function readContext(privateMetadata: string): z.infer<typeof askContextSchema> | undefined {
	try {
		return askContextSchema.safeParse(JSON.parse(privateMetadata)).data;
	} catch {
		return undefined;
	}
}

/** Submit of "Ask GPU Cloud about this message": a chat in the message's channel, the message as context. */
export function submitAskMessage(services: AppServices) {
	return async ({
		ack,
		body,
		view,
		client,
	}: SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs): Promise<void> => {
		const asked = readContext(view.private_metadata);
		const question = questionStateSchema
			.safeParse(view.state)
			.data?.values[ASK_FORM.question.block][ASK_FORM.question.action].value?.trim();
		if (!asked || !question) {
			await ack({
				response_action: 'errors',
				errors: {
					[ASK_FORM.question.block]: asked
						? 'Write a question.'
						: 'This form is out of date; use the shortcut again.',
				},
			});
			return;
		}
		await ack();
		const context = { user: body.user.id, channel: asked.channel };
		const reply = await services.chat.ask(context, askAboutMessagePrompt(asked, question));
		if (reply)
			await client.chat.postEphemeral({
				channel: context.channel,
				user: context.user,
				text: reply.text,
				blocks: reply.blocks,
			});
	};
}
