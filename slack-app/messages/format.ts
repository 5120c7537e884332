import type { KnownBlock } from '../model';

/** Slack's limits that the renderers must respect. */
export const SLACK_LIMITS = {
	sectionText: 3000,
	/** A code block plus its fences must fit a section. */
	codeBlock: 2900,
	buttonValue: 2000,
	optionText: 75,
	staticSelectOptions: 100,
	fallbackText: 3000,
	/** A view's `private_metadata` (https://docs.slack.dev/reference/views/modal-views). */
	privateMetadata: 3000,
	/** An uploaded image's description (https://docs.slack.dev/reference/methods/files.getUploadURLExternal). */
	altText: 1000,
} as const;

/**
 * Escapes the three characters Slack treats as markup (`<!channel>`, `<@U…>`, `<!subteam^…>`,
 * links) in mrkdwn, `markdown` blocks and a message's `text`. Every builder passes text that is not
 * the app's own through this one function: job outputs, model replies, prompts, endpoint data,
 * error details.
 */
export function escapeText(text: string): string {
	return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The text of a message the app escaped, as it was before (to read answers back as context). */
export function unescapeText(text: string): string {
	return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

export function truncate(text: string, max: number): string {
	if (text.length <= max) return text;
	return `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** Escaped, then cut to `max` characters without splitting an entity such as `&amp;`. */
export function escapeWithin(text: string, max: number): string {
	const escaped = escapeText(text);
	if (escaped.length <= max) return escaped;
	return `${escaped.slice(0, Math.max(0, max - 1)).replace(/&[a-z]{0,3}$/, '')}…`;
}

export function mention(userId: string): string {
	return `<@${userId}>`;
}

/** `1h 2m`, `3m 4s`, `5s`, `under a second`: short enough for a status line. */
export function formatDuration(ms: number): string {
	if (ms < 1000) return 'under a second';
	const seconds = Math.round(ms / 1000);
	if (seconds < 60) return `${seconds}s`;
	const minutes = Math.floor(seconds / 60);
	if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
	return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

/** A code block that survives Slack: escaped, no triple backticks inside, within the section limit. */
export function codeBlock(text: string, max: number = SLACK_LIMITS.codeBlock): string {
	const safe = text.replace(/```/g, '`\u200b``');
	return `\`\`\`${escapeWithin(safe, max)}\`\`\``;
}

export function section(text: string): KnownBlock {
	return {
		type: 'section',
		text: { type: 'mrkdwn', text: truncate(text, SLACK_LIMITS.sectionText) },
	};
}

export function context(text: string): KnownBlock {
	return {
		type: 'context',
		elements: [{ type: 'mrkdwn', text: truncate(text, SLACK_LIMITS.sectionText) }],
	};
}

/** Pretty JSON for people: strings stay strings, everything else is indented. */
export function readableJson(value: unknown): string {
	if (typeof value === 'string') return value;
	return JSON.stringify(value, null, 2) ?? String(value);
}

/**
 * A time every reader sees in their own time zone and locale (Slack's `<!date^…>`), e.g.
 * `{date_short_pretty} {time}` or `{ago}`; `fallback` is what clients that cannot format it show.
 */
export function slackDate(ms: number, format: string, fallback: string): string {
	return `<!date^${Math.floor(ms / 1000)}^${format}|${escapeText(fallback)}>`;
}

/** `2025-01-01 12:00 UTC`: the fallback of a formatted date. */
export function utcMinute(ms: number): string {
	return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
