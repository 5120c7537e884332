/**
 * The `chunks` of chat.startStream / appendStream / stopStream as Slack takes them
 * (https://docs.slack.dev/reference/methods/chat.appendStream, "Using the chunks parameter"):
 * `markdown_text` (`text`), `task_update` (`id`, `title`, `status` pending | in_progress | complete |
 * error, optional `details`, `output`, `sources`), `plan_update` (`title`) and `blocks` (`blocks`).
 * Anything else is refused with `invalid_arguments`, naming the field as Slack's
 * `response_metadata.messages` do; chat.startStream's `task_display_mode` is `timeline` or `plan`.
 */

export const TASK_STATUSES = ['pending', 'in_progress', 'complete', 'error'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TASK_DISPLAY_MODES = ['timeline', 'plan'] as const;
export type TaskDisplayMode = (typeof TASK_DISPLAY_MODES)[number];

/** A task as the message shows it now: its latest update. */
export interface StreamTask {
	id: string;
	title: string;
	status: TaskStatus;
	details?: string;
	output?: string;
}

/** What one call's chunks add to a streaming message. */
export interface ChunkContent {
	text: string;
	tasks: StreamTask[];
	planTitle?: string;
	blocks: unknown[];
}

export class ChunkRefused extends Error {
	constructor(readonly problems: string[]) {
		super('invalid_arguments');
	}
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The chunks of one call, or ChunkRefused listing each problem with its json-pointer. */
export function parseChunks(chunks: unknown): ChunkContent {
	const content: ChunkContent = { text: '', tasks: [], blocks: [] };
	const problems: string[] = [];
	const problem = (what: string, pointer: string): void => {
		problems.push(`[ERROR] ${what} [json-pointer:${pointer}]`);
	};
	if (!Array.isArray(chunks)) {
		problem('must be an array', '/chunks');
		throw new ChunkRefused(problems);
	}
	chunks.forEach((chunk: unknown, index) => {
		const at = `/chunks/${index}`;
		if (!isRecord(chunk)) {
			problem('must be an object', at);
			return;
		}
		const text = (field: string, required: boolean): string | undefined => {
			const value = chunk[field];
			if (value === undefined && !required) return undefined;
			if (typeof value !== 'string' || (required && value.trim() === '')) {
				problem(
					value === undefined ? `missing required field: ${field}` : `invalid field: ${field}`,
					`${at}/${field}`,
				);
				return undefined;
			}
			return value;
		};
		switch (chunk.type) {
			case 'markdown_text':
				content.text += text('text', true) ?? '';
				return;
			case 'plan_update': {
				const title = text('title', true);
				if (title !== undefined) content.planTitle = title;
				return;
			}
			case 'task_update': {
				const id = text('id', true);
				const title = text('title', true);
				const status = chunk.status;
				if (!TASK_STATUSES.some((known) => known === status))
					problem(`status must be one of ${TASK_STATUSES.join(', ')}`, `${at}/status`);
				const details = text('details', false);
				const output = text('output', false);
				if (chunk.sources !== undefined && !Array.isArray(chunk.sources))
					problem('invalid field: sources', `${at}/sources`);
				const known = TASK_STATUSES.find((candidate) => candidate === status);
				if (id !== undefined && title !== undefined && known)
					content.tasks.push({
						id,
						title,
						status: known,
						...(details !== undefined ? { details } : {}),
						...(output !== undefined ? { output } : {}),
					});
				return;
			}
			case 'blocks':
				if (!Array.isArray(chunk.blocks)) problem('missing required field: blocks', `${at}/blocks`);
				else content.blocks.push(...(chunk.blocks as unknown[]));
				return;
			default:
				problem(`unknown chunk type: ${String(chunk.type)}`, `${at}/type`);
		}
	});
	if (problems.length > 0) throw new ChunkRefused(problems);
	return content;
}

/** The message's tasks after an update: a known id changes in place, a new one goes last. */
export function mergeTasks(current: readonly StreamTask[], updates: StreamTask[]): StreamTask[] {
	const merged = [...current];
	for (const update of updates) {
		const at = merged.findIndex((task) => task.id === update.id);
		if (at === -1) merged.push(update);
		else merged[at] = update;
	}
	return merged;
}
