import type { SchemaField } from '../../shared/input-schema';
import type { types } from '@slack/bolt';
import type { KnownBlock } from '../model';
import { SLACK_LIMITS, truncate } from './format';

/**
 * The job form's input blocks for an endpoint's fields (read from its schema by shared/): one input
 * block per property, within what Slack takes in a view. Pure functions: schema fields in, blocks out.
 */

/** Ids of the field blocks: the property name follows the prefix, so a submission maps back to it. */
export const FIELD_BLOCK_PREFIX = 'field.';
export const FIELD_ACTION = 'value';
/** Ids of the file inputs of media fields: the property name follows the prefix. */
export const FILE_BLOCK_PREFIX = 'file.';
export const FILE_ACTION = 'files';
export const ADVANCED_BLOCK = { block: 'advanced', action: 'value' } as const;

/** Input block texts (https://docs.slack.dev/reference/block-kit/blocks/input-block). */
export const INPUT_LIMITS = {
	label: 2000,
	hint: 2000,
	placeholder: 150,
	/** plain_text_input's max_length may be at most 3000 (plain-text-input-element). */
	plainText: 3000,
	/** An option's value (https://docs.slack.dev/reference/block-kit/composition-objects/option-object). */
	optionValue: 150,
	blockId: 255,
} as const;

/** The block id of a field, or undefined when its name would not fit one (it goes to Advanced: JSON). */
export function fieldBlockId(field: SchemaField): string | undefined {
	const id = `${FIELD_BLOCK_PREFIX}${field.name}`;
	return field.name !== '' && id.length <= INPUT_LIMITS.blockId ? id : undefined;
}

/** The block id of a media field's file input, when the field has one. */
export function fileBlockId(field: SchemaField): string | undefined {
	const id = `${FILE_BLOCK_PREFIX}${field.name}`;
	return field.media && id.length <= INPUT_LIMITS.blockId ? id : undefined;
}

/** How many blocks a field takes: a media field's file input is a block of its own. */
export function blocksOfField(field: SchemaField): number {
	return fileBlockId(field) ? 2 : 1;
}

/**
 * The file extensions Slack's file input takes for the media types of an `x-media` list
 * (`filetypes` are extensions: https://docs.slack.dev/reference/block-kit/block-elements/file-input-element).
 * A type with no entry here means any file: the app checks what Slack says the file is anyway.
 */
const EXTENSIONS: Record<string, string[]> = {
	'audio/*': [
		'mp3',
		'wav',
		'm4a',
		'aac',
		'ogg',
		'oga',
		'opus',
		'flac',
		'aif',
		'aiff',
		'wma',
		'amr',
	],
	'video/*': ['mp4', 'mov', 'm4v', 'webm', 'mkv', 'avi', 'mpeg', 'mpg', '3gp', 'wmv'],
	'image/*': ['png', 'jpg', 'jpeg', 'gif', 'webp', 'bmp', 'tif', 'tiff', 'heic'],
	'application/pdf': ['pdf'],
};

export function filetypesOf(accept: string): string[] | undefined {
	const lists = accept.split(',').map((type) => EXTENSIONS[type.trim().toLowerCase()]);
	return lists.every((list) => list !== undefined) ? [...new Set(lists.flat())] : undefined;
}

/**
 * A media field's file input, beside its URL box: one file, of the kinds the field reads. Optional,
 * as its URL box is: the form checks that a required field has one of the two.
 */
export function fileBlock(field: SchemaField, blockId: string): KnownBlock {
	const filetypes = filetypesOf(field.media ?? '');
	return {
		type: 'input',
		block_id: blockId,
		optional: true,
		label: plainText(truncate(`${field.title}: a file instead`, INPUT_LIMITS.label)),
		hint: plainText(
			'Instead of a URL: a file from your computer or from Slack (up to 10 MB). The app hands it to GPU Cloud for this job only.',
		),
		element: {
			type: 'file_input',
			action_id: FILE_ACTION,
			max_files: 1,
			...(filetypes ? { filetypes } : {}),
		},
	};
}

const plainText = (text: string) => ({ type: 'plain_text' as const, text });

interface ChoiceList {
	options: { text: { type: 'plain_text'; text: string }; value: string }[];
	/** Choices left out: past the select's 100 options, or with a value longer than an option takes. */
	left: number;
}

function choices(field: SchemaField): ChoiceList {
	const fitting = (field.options ?? [])
		.map(String)
		.filter((value) => value.length <= INPUT_LIMITS.optionValue);
	const shown = fitting.slice(0, SLACK_LIMITS.staticSelectOptions);
	return {
		options: shown.map((value) => ({
			text: plainText(truncate(value, SLACK_LIMITS.optionText)),
			value,
		})),
		left: (field.options?.length ?? 0) - shown.length,
	};
}

function defaultText(field: SchemaField): string | undefined {
	if (field.default === undefined) return undefined;
	const text = typeof field.default === 'string' ? field.default : JSON.stringify(field.default);
	return text.length > 0 && text.length <= INPUT_LIMITS.plainText ? text : undefined;
}

/** The element of a field, and what its hint must add (choices that did not fit). */
function fieldElement(field: SchemaField): { element: types.InputBlockElement; note?: string } {
	const initial = defaultText(field);
	const withInitial = initial === undefined ? {} : { initial_value: initial };
	const action_id = FIELD_ACTION;
	switch (field.kind) {
		case 'text':
		case 'longText':
			return {
				element: {
					type: 'plain_text_input',
					action_id,
					multiline: field.kind === 'longText',
					...withInitial,
				},
			};
		case 'json':
			return {
				element: {
					type: 'plain_text_input',
					action_id,
					multiline: true,
					placeholder: plainText(field.jsonShape === 'array' ? '["…"]' : '{"…": …}'),
					...withInitial,
				},
			};
		case 'url':
			return { element: { type: 'url_text_input', action_id, ...withInitial } };
		case 'number':
		case 'integer':
			return {
				element: {
					type: 'number_input',
					action_id,
					is_decimal_allowed: field.kind === 'number',
					...(typeof field.default === 'number' ? { initial_value: String(field.default) } : {}),
				},
			};
		case 'boolean': {
			const yes = { text: plainText('Yes'), value: 'true' };
			return {
				element: {
					type: 'checkboxes',
					action_id,
					options: [yes],
					...(field.default === true ? { initial_options: [yes] } : {}),
				},
			};
		}
		case 'enum': {
			const { options, left } = choices(field);
			const initialOption = options.find((option) => option.value === String(field.default));
			const note =
				left > 0
					? `${options.length} of ${field.options?.length ?? 0} choices are listed; for another, give "${field.name}" in Advanced: JSON.`
					: undefined;
			return {
				element: {
					type: 'static_select',
					action_id,
					placeholder: plainText('Choose'),
					options,
					...(initialOption ? { initial_option: initialOption } : {}),
				},
				note,
			};
		}
	}
}

/**
 * One input block for a field: its title as the label (with "(JSON)" for a JSON field), its
 * description as the hint, optional unless required. A checkbox is never required: unticked is "no".
 */
export function fieldBlock(field: SchemaField, blockId: string): KnownBlock {
	const { element, note } = fieldElement(field);
	// A media field's URL may instead be a file: neither block alone is required.
	const withFile = fileBlockId(field) !== undefined;
	const hint = [field.description, note, withFile ? 'Or attach a file below.' : undefined]
		.filter(Boolean)
		.join(' ');
	const label = field.kind === 'json' ? `${field.title} (JSON)` : field.title;
	return {
		type: 'input',
		block_id: blockId,
		label: plainText(truncate(label, INPUT_LIMITS.label)),
		optional: !field.required || field.kind === 'boolean' || withFile,
		...(hint ? { hint: plainText(truncate(hint, INPUT_LIMITS.hint)) } : {}),
		element,
	};
}

/**
 * The fields that get their blocks within `room` blocks (a media field takes two): required ones
 * first, then the others in the schema's order. The rest are given in Advanced: JSON.
 */
export function shownFields(fields: readonly SchemaField[], room: number): SchemaField[] {
	const named = fields.filter((field) => fieldBlockId(field) !== undefined);
	const shown: SchemaField[] = [];
	let used = 0;
	for (const field of [
		...named.filter((candidate) => candidate.required),
		...named.filter((candidate) => !candidate.required),
	]) {
		if (used + blocksOfField(field) > room) break;
		shown.push(field);
		used += blocksOfField(field);
	}
	return shown;
}

export function advancedBlock(hint: string): KnownBlock {
	return {
		type: 'input',
		block_id: ADVANCED_BLOCK.block,
		optional: true,
		label: plainText('Advanced: JSON'),
		hint: plainText(truncate(hint, INPUT_LIMITS.hint)),
		element: {
			type: 'plain_text_input',
			action_id: ADVANCED_BLOCK.action,
			multiline: true,
			placeholder: plainText('{"field": "value"}'),
		},
	};
}
