import type {
	AllMiddlewareArgs,
	Logger,
	SlackViewMiddlewareArgs,
	ViewSubmitAction,
} from '@slack/bolt';
import { AuthenticationError, PermissionError } from '../../../shared/errors';
import { NAME_PATTERN, NAME_RULE } from '../../../shared/schemas/common';
import type { WorkspaceLink } from '../../installations/store';
import { linkedModal } from '../../messages/link-workspace';
import { isWorkspaceAdmin } from '../../services/access';
import { errorSummary } from '../../services/errors';

export interface LinkWorkspaceDeps {
	/** Resolves when the service accepts the key for the organization; rejects with the service's error. */
	checkLink(link: { organization: string; apiKey: string }): Promise<void>;
	/** Stores the link; the workspace's next request runs with it. */
	saveLink(link: Omit<WorkspaceLink, 'linkedAt'>): Promise<void>;
	logger: Logger;
}

/** Submit of the `/gpu setup` modal: a workspace admin links the organization once the service accepts its key. */
export function submitLinkWorkspace(deps: LinkWorkspaceDeps) {
	return async ({
		ack,
		body,
		view,
		client,
	}: SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs): Promise<void> => {
		const team = body.team?.id;
		const values = view.state.values;
		const organization = values.organization?.value?.value?.trim() ?? '';
		const apiKey = values.api_key?.value?.value?.trim() ?? '';
		const project = values.project?.value?.value?.trim() || undefined;
		const errors: Record<string, string> = {};
		if (!NAME_PATTERN.test(organization)) errors.organization = `The organization ${NAME_RULE}.`;
		if (project !== undefined && !NAME_PATTERN.test(project))
			errors.project = `The project ${NAME_RULE}.`;
		if (apiKey.length === 0 || apiKey.length > 512)
			errors.api_key = 'Paste the API key from the portal (API Access).';
		if (!team) errors.organization = 'Slack did not say which workspace this is.';
		if (Object.keys(errors).length > 0 || !team)
			return void (await ack({ response_action: 'errors', errors }));
		if (!(await isWorkspaceAdmin(client, body.user.id)))
			return void (await ack({
				response_action: 'errors',
				errors: { organization: 'Only a workspace admin or owner can link an organization.' },
			}));
		try {
			await deps.checkLink({ organization, apiKey });
		} catch (error) {
			const refused = error instanceof AuthenticationError || error instanceof PermissionError;
			deps.logger.warn(`A GPU Cloud link for ${team} was not accepted: ${errorSummary(error)}`);
			return void (await ack({
				response_action: 'errors',
				errors: {
					api_key: refused
						? `GPU Cloud refused this key for organization "${organization}".`
						: 'GPU Cloud could not be reached to check the key; try again in a minute.',
				},
			}));
		}
		await deps.saveLink({ teamId: team, organization, project, apiKey, linkedBy: body.user.id });
		deps.logger.info(`${team} linked GPU Cloud organization ${organization} (by ${body.user.id}).`);
		await ack({ response_action: 'update', view: linkedModal(organization) });
	};
}
