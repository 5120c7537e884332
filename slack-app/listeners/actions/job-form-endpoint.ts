import type {
	AllMiddlewareArgs,
	BlockAction,
	SlackActionMiddlewareArgs,
	StaticSelectAction,
} from '@slack/bolt';
import type { AppServices } from '../../features';

/** An endpoint chosen in the job form: the form is rebuilt with its fields. */
export function chooseJobFormEndpoint(services: AppServices) {
	return async ({
		ack,
		body,
		action,
		client,
	}: SlackActionMiddlewareArgs<BlockAction<StaticSelectAction>> &
		AllMiddlewareArgs): Promise<void> => {
		await ack();
		const endpoint = action.selected_option?.value;
		const { view } = body;
		if (!view || !endpoint) return;
		await services.jobForm.chooseEndpoint(
			client,
			{ id: view.id, hash: view.hash, privateMetadata: view.private_metadata },
			endpoint,
		);
	};
}
