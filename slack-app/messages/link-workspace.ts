import { section } from './format';

/** The `/gpu setup` modal in which a workspace admin links a GPU Cloud organization. */
export const LINK_VIEW = 'gpu_cloud_link';

const input = (block: string, label: string, hint: string, optional = false) => ({
	type: 'input',
	block_id: block,
	optional,
	label: { type: 'plain_text', text: label },
	hint: { type: 'plain_text', text: hint },
	element: { type: 'plain_text_input', action_id: 'value', max_length: 512 },
});

/** The value of the sharing checkbox when it is ticked. */
export const SHARE_JOBS = 'share';

/** The `/gpu setup` modal: the organization to link and its API key. */
export function linkModal() {
	return {
		type: 'modal' as const,
		callback_id: LINK_VIEW,
		title: { type: 'plain_text' as const, text: 'Link GPU Cloud' },
		submit: { type: 'plain_text' as const, text: 'Link' },
		close: { type: 'plain_text' as const, text: 'Cancel' },
		blocks: [
			section(
				'Every /gpu request in this workspace runs in the organization you link here, with its API key.',
			),
			input('organization', 'Organization', 'Its short name, as in the portal (for example acme).'),
			input(
				'api_key',
				'API key',
				'From the portal, API Access. Checked now, stored encrypted, never shown again.',
			),
			input('project', 'Project (optional)', 'Where /gpu queue creates queues.', true),
			{
				type: 'input',
				block_id: 'share_jobs',
				optional: true,
				label: { type: 'plain_text', text: 'Sharing' },
				element: {
					type: 'checkboxes',
					action_id: 'value',
					options: [
						{
							value: SHARE_JOBS,
							// Slack refuses an option text over 75 characters: the detail goes in its description.
							text: { type: 'plain_text', text: "Share this workspace's jobs" },
							description: {
								type: 'plain_text',
								text: 'Workspaces linked to this organization may see their status and input',
							},
						},
					],
				},
			},
		],
	};
}

/** What the modal shows once the key is accepted. */
export function linkedModal(organization: string) {
	return {
		type: 'modal' as const,
		title: { type: 'plain_text' as const, text: 'Link GPU Cloud' },
		close: { type: 'plain_text' as const, text: 'Done' },
		blocks: [
			section(`Linked to organization *${organization}*. Everyone here can use \`/gpu\` now.`),
		],
	};
}
