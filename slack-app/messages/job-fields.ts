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
	const hint = [field.description, note].filter(Boolean).join(' ');
	const label = field.kind === 'json' ? `${field.title} (JSON)` : field.title;
	return {
		type: 'input',
		block_id: blockId,
		label: plainText(truncate(label, INPUT_LIMITS.label)),
		optional: !field.required || field.kind === 'boolean',
		...(hint ? { hint: plainText(truncate(hint, INPUT_LIMITS.hint)) } : {}),
		element,
	};
}

/**
 * The fields that get a block of their own within `room` blocks: required ones first, then the
 * others in the schema's order. The rest are given in Advanced: JSON.
 */
export function shownFields(fields: readonly SchemaField[], room: number): SchemaField[] {
	const named = fields.filter((field) => fieldBlockId(field) !== undefined);
	return [
		...named.filter((field) => field.required),
		...named.filter((field) => !field.required),
	].slice(0, Math.max(0, room));
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
