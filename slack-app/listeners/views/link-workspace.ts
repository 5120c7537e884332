import type {
	AllMiddlewareArgs,
	Logger,
	SlackViewMiddlewareArgs,
	ViewSubmitAction,
} from '@slack/bolt';
import { AuthenticationError, PermissionError } from '../../../shared/errors';
import { NAME_PATTERN, NAME_RULE } from '../../../shared/schemas/common';
import type { WorkspaceLink } from '../../state/installations/store';
import { linkedModal, SHARE_JOBS } from '../../messages/link-workspace';
import { isWorkspaceAdmin } from '../../requests/access';
import { errorSummary } from '../../slack/errors';

export interface LinkWorkspaceDeps {
	/** Resolves when the service accepts the key for the organization; rejects with the service's error. */
	checkLink(link: { organization: string; apiKey: string }): Promise<void>;
	/** Stores the link; the workspace's next request runs with it. */
	saveLink(link: Omit<WorkspaceLink, 'linkedAt'>): Promise<void>;
	logger: Logger;
}

/**
 * Why a pasted key cannot be one, before it goes into a request header: a line break or an invisible
 * character would fail inside the HTTP client, be retried like a network error and make the modal
 * miss Slack's 3 s.
 */
export function apiKeyProblem(apiKey: string): string | undefined {
	if (apiKey.length === 0 || apiKey.length > 512)
		return 'Paste the API key from the portal (API Access).';
	if (/[\r\n\u2028\u2029]/.test(apiKey))
		return 'The key contains a line break: paste it again as one line.';
	if (apiKey.includes(' ')) return 'The key contains a space: paste it again from the portal.';
	const invisible = /[\p{Cc}\p{Cf}\p{Z}]/u.exec(apiKey)?.[0];
	if (invisible)
		return `The key contains an invisible character (U+${codePoint(invisible)}): paste it again, or type it.`;
	if (/[^\x21-\x7e]/.test(apiKey))
		return 'The key contains a character that is not plain ASCII: paste it again from the portal.';
	return undefined;
}

function codePoint(character: string): string {
	return (character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
}

/** Submit of the `/gpu setup` modal: a workspace admin links the organization once the service accepts its key. */
export function submitLinkWorkspace(deps: LinkWorkspaceDeps) {
	return async ({
		ack,
		body,
		view,
		client,
	}: SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs): Promise<void> => {
		// The installation the view belongs to: Bolt's client acts there, so the admin check and the
		// link must both name it. A Slack Connect modal names the submitter's team as well.
		const team = view.app_installed_team_id ?? body.team?.id;
		const values = view.state.values;
		const organization = values.organization?.value?.value?.trim() ?? '';
		const apiKey = values.api_key?.value?.value?.trim() ?? '';
		const project = values.project?.value?.value?.trim() || undefined;
		const shareJobs =
			values.share_jobs?.value?.selected_options?.some((option) => option.value === SHARE_JOBS) ===
			true;
		const errors: Record<string, string> = {};
		if (!NAME_PATTERN.test(organization)) errors.organization = `The organization ${NAME_RULE}.`;
		if (project !== undefined && !NAME_PATTERN.test(project))
			errors.project = `The project ${NAME_RULE}.`;
		const keyProblem = apiKeyProblem(apiKey);
		if (keyProblem) errors.api_key = keyProblem;
		if (!team) errors.organization = 'Slack did not say which workspace this is.';
		else if (
			(body.team?.id !== undefined && body.team.id !== team) ||
			(body.user.team_id !== undefined && body.user.team_id !== team)
		)
			errors.organization =
				'This form belongs to another workspace than yours: open /gpu setup in the workspace to link.';
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
		await deps.saveLink({
			teamId: team,
			organization,
			project,
			apiKey,
			linkedBy: body.user.id,
			shareJobs,
		});
		deps.logger.info(
			`${team} linked GPU Cloud organization ${organization} (by ${body.user.id}; jobs ${shareJobs ? 'shared with' : 'not shared with'} other workspaces linked to it).`,
		);
		await ack({ response_action: 'update', view: linkedModal(organization) });
	};
}
