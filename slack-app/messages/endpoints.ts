import type { InferenceEndpoint } from '../../shared/schemas';
import type { KnownBlock, SlackMessage } from '../model';
import { expectedInput } from '../../shared/input-schema';
import { ACTIONS, encodeValue } from './actions';
import { context, escapeText, escapeWithin, section } from './format';

export const ENDPOINTS_PAGE_SIZE = 8;

/** Case-insensitive match on name, display name and description. */
export function matchesSearch(endpoint: InferenceEndpoint, search: string | undefined): boolean {
	if (!search) return true;
	const words = search.toLowerCase().split(/\s+/).filter(Boolean);
	const haystack =
		`${endpoint.name} ${endpoint.display_name} ${endpoint.description}`.toLowerCase();
	return words.every((word) => haystack.includes(word));
}

/** One page of the catalogue, with Previous/Next buttons that carry the page and search. */
export function endpointsPageMessage(
	command: string,
	all: InferenceEndpoint[],
	page: number,
	search?: string,
): SlackMessage {
	const matching = all.filter((endpoint) => matchesSearch(endpoint, search));
	const pages = Math.max(1, Math.ceil(matching.length / ENDPOINTS_PAGE_SIZE));
	const current = Math.min(Math.max(1, page), pages);
	const items = matching.slice((current - 1) * ENDPOINTS_PAGE_SIZE, current * ENDPOINTS_PAGE_SIZE);
	const title = search ? `Endpoints matching "${escapeText(search)}"` : 'Inference endpoints';
	const blocks: KnownBlock[] = [
		section(`*${title}* · page ${current} of ${pages} · ${matching.length} in all`),
	];
	if (items.length === 0) {
		blocks.push(
			section(
				search
					? `Nothing matches "${escapeText(search)}". Try \`${command} endpoints\` for the whole catalogue.`
					: 'The catalogue is empty.',
			),
		);
	}
	for (const endpoint of items) {
		const expects = expectedInput(endpoint.input_schema);
		blocks.push(
			section(
				`*${escapeText(endpoint.display_name)}* \`${escapeText(endpoint.name)}\`\n${escapeWithin(endpoint.description, 300)}\n` +
					(expects ? `Input: ${escapeWithin(expects, 600)}\n` : '') +
					`_${escapeText(endpoint.price_description)}_ · run it: \`${command} job ${escapeText(endpoint.name)} {...}\``,
			),
		);
	}
	const buttons = [];
	const previous = encodeValue({ page: current - 1, ...(search ? { search } : {}) });
	const next = encodeValue({ page: current + 1, ...(search ? { search } : {}) });
	if (current > 1 && previous) {
		buttons.push({
			type: 'button' as const,
			action_id: `${ACTIONS.endpointsPage}.previous`,
			text: { type: 'plain_text' as const, text: 'Previous' },
			value: previous,
		});
	}
	if (current < pages && next) {
		buttons.push({
			type: 'button' as const,
			action_id: `${ACTIONS.endpointsPage}.next`,
			text: { type: 'plain_text' as const, text: 'Next' },
			value: next,
		});
	}
	if (buttons.length)
		blocks.push({ type: 'actions', block_id: 'gpu.endpoints_nav', elements: buttons });
	blocks.push(context('Only you can see this list.'));
	return {
		text: `${title}: ${items.map((endpoint) => escapeText(endpoint.name)).join(', ') || 'none'}`,
		blocks,
	};
}
