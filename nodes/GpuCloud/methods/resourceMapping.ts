import type {
	FieldType,
	ILoadOptionsFunctions,
	ResourceMapperField,
	ResourceMapperFields,
} from 'n8n-workflow';
import { mediaFieldsOf, parseInputSchema, readSchemaForm, type SchemaField } from '../../../shared';
import { managementClient } from '../transport';
import { toNodeError } from '../helpers/errors';

const USE_JSON = 'Set "Input" to "Using JSON" to write the input yourself.';

const FIELD_TYPES: Record<Exclude<SchemaField['kind'], 'json'>, FieldType> = {
	text: 'string',
	longText: 'string',
	number: 'number',
	integer: 'number',
	boolean: 'boolean',
	enum: 'options',
	url: 'url',
};

/**
 * n8n's field for one property: JSON fields get n8n's JSON editor when the schema says object or
 * array. A media field may get a file under "Files for Media Fields" instead of a URL, so n8n must
 * not refuse to run when it is empty: the node checks that it has one or the other.
 */
function toMapperField(field: SchemaField, isMedia: boolean): ResourceMapperField {
	const mapperField: ResourceMapperField = {
		id: field.name,
		displayName: isMedia ? `${field.title} (URL, or a File Below)` : field.title,
		required: field.required && !isMedia,
		defaultMatch: false,
		canBeUsedToMatch: false,
		display: true,
		type: field.kind === 'json' ? (field.jsonShape ?? 'string') : FIELD_TYPES[field.kind],
	};
	if (field.options)
		mapperField.options = field.options.map((option) => ({ name: String(option), value: option }));
	const { default: fallback } = field;
	if (typeof fallback === 'string' || typeof fallback === 'number' || typeof fallback === 'boolean')
		mapperField.defaultValue = fallback;
	else if (fallback !== undefined) mapperField.defaultValue = JSON.stringify(fallback);
	return mapperField;
}

/** Whether the user gave the endpoint as an expression: its fields are known only when the node runs. */
function endpointIsExpression(context: ILoadOptionsFunctions): boolean {
	const raw: unknown = context.getNode().parameters.endpoint;
	const value = typeof raw === 'object' && raw !== null && 'value' in raw ? raw.value : raw;
	return typeof value === 'string' && value.startsWith('=');
}

/**
 * The fields of the chosen endpoint's input, from the schema it publishes, for the "Input Fields"
 * resourceMapper; an empty list with the reason when the input has to be written as JSON.
 */
export async function getEndpointFields(
	this: ILoadOptionsFunctions,
): Promise<ResourceMapperFields> {
	if (endpointIsExpression(this))
		return {
			fields: [],
			emptyFieldsNotice: `The endpoint is set by an expression, so its fields are known only when the node runs. ${USE_JSON}`,
		};
	const name = this.getNodeParameter('endpoint', '', { extractValue: true });
	if (typeof name !== 'string' || name.trim() === '')
		return { fields: [], emptyFieldsNotice: 'Choose an inference endpoint to see its fields.' };
	try {
		const { client } = await managementClient(this);
		const endpoint = await client.endpoints.get(name.trim());
		const form = readSchemaForm(endpoint.input_schema);
		if (form.kind === 'json')
			return { fields: [], emptyFieldsNotice: `${form.reason} ${USE_JSON}` };
		const media = new Set(
			mediaFieldsOf(parseInputSchema(endpoint.input_schema)).map(({ field }) => field),
		);
		return { fields: form.fields.map((field) => toMapperField(field, media.has(field.name))) };
	} catch (error) {
		throw toNodeError(this.getNode(), error, 0);
	}
}
