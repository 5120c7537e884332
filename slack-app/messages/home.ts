import type { KnownBlock, SlackMessage } from '../model';
import { ACTIONS, decodeValue, encodeValue, jobRefSchema, type JobRef } from './actions';
import { context, escapeText, mention, section } from './format';

/** The app's Home tab (views.publish): a person's recent requests, their slots, and for admins the settings. */

export interface HomeRequest {
	/** The request's parent message as the channel shows it now (already rendered and escaped). */
	parent: SlackMessage;
	/** Where the thread is, for "Open thread" (absent when Slack gave no permalink). */
	permalink?: string;
}

export interface HomeSettings {
	organization: string;
	project?: string;
	allowedUsers: string[];
	allowedChannels: string[];
	maxJobsPerUser: number;
	contact: string;
}

export interface HomeView {
	requests: HomeRequest[];
	running: number;
	limit: number;
	/** One line at the top: the answer to the person's last click here, as the app's own (escaped) mrkdwn. */
	notice?: string;
	/** Shown to workspace admins and owners only. */
	settings?: HomeSettings;
}

/** The job a parent message's Cancel button stops, while it still offers one (the request is running). */
export function runningJobOf(parent: SlackMessage): JobRef | undefined {
	for (const block of parent.blocks) {
		if (block.type !== 'actions') continue;
		for (const element of block.elements) {
			if (element.type === 'button' && element.action_id === ACTIONS.cancel)
				return decodeValue(jobRefSchema, element.value);
		}
	}
	return undefined;
}

function requestBlocks(request: HomeRequest): KnownBlock[] {
	// The parent's own words: who asked for what, then its status line.
	const shown = request.parent.blocks.filter(
		(block) => block.type === 'section' || block.type === 'context',
	);
	const links = request.permalink ? [context(`<${request.permalink}|Open thread>`)] : [];
	const job = runningJobOf(request.parent);
	const value = job ? encodeValue(job) : undefined;
	const cancel: KnownBlock[] = value
		? [
				{
					type: 'actions',
					elements: [
						{
							type: 'button',
							action_id: ACTIONS.homeCancel,
							text: { type: 'plain_text', text: 'Cancel' },
							style: 'danger',
							value,
							confirm: {
								title: { type: 'plain_text', text: 'Cancel this job?' },
								text: { type: 'plain_text', text: 'GPU time already used is still billed.' },
								confirm: { type: 'plain_text', text: 'Cancel job' },
								deny: { type: 'plain_text', text: 'Keep running' },
							},
						},
					],
				},
			]
		: [];
	return [...shown, ...links, ...cancel, { type: 'divider' }];
}

function settingsBlocks(settings: HomeSettings): KnownBlock[] {
	const users =
		settings.allowedUsers.length > 0
			? settings.allowedUsers.map(mention).join(', ')
			: 'everyone in the workspace';
	const channels =
		settings.allowedChannels.length > 0
			? settings.allowedChannels.map((id) => `<#${id}>`).join(', ')
			: 'every channel the app is in';
	const organization = `\`${escapeText(settings.organization)}\`${settings.project ? `, project \`${escapeText(settings.project)}\`` : ''}`;
	return [
		{ type: 'header', text: { type: 'plain_text', text: 'Settings (admins)' } },
		section(
			[
				`*Linked organization:* ${organization}`,
				`*Who may use it:* ${users}`,
				`*Where:* ${channels}`,
				`*Jobs at once per person:* ${settings.maxJobsPerUser}`,
				// The contact comes from the app's configuration and may be a mention: not escaped.
				`*Access requests go to:* ${settings.contact}`,
			].join('\n'),
		),
		context(
			"Set by the app's environment (SLACK_ALLOWED_USERS, SLACK_ALLOWED_CHANNELS, SLACK_MAX_JOBS_PER_USER, SLACK_ACCESS_CONTACT); restart the app to change them.",
		),
	];
}

/** The Home tab as a `home` view for views.publish. */
export function homeView(view: HomeView): { type: 'home'; blocks: KnownBlock[] } {
	const blocks: KnownBlock[] = [
		{ type: 'header', text: { type: 'plain_text', text: 'GPU Cloud' } },
		section(
			`Jobs, transcriptions, images and chat on GPUs. Type \`/gpu help\` in any channel the app is in.`,
		),
		context(`:gear: You have *${view.running}* of *${view.limit}* GPU job slots in use.`),
	];
	if (view.notice) blocks.push(section(view.notice));
	blocks.push({ type: 'header', text: { type: 'plain_text', text: 'Your recent requests' } });
	if (view.requests.length === 0)
		blocks.push(
			context('Nothing yet. Your jobs, images and chats will show here with their status.'),
		);
	for (const request of view.requests) blocks.push(...requestBlocks(request));
	if (view.settings) blocks.push(...settingsBlocks(view.settings));
	// Slack allows 100 blocks in a Home view.
	return { type: 'home', blocks: blocks.slice(0, 100) };
}
