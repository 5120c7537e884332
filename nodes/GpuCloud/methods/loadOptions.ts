import type { ILoadOptionsFunctions, INodePropertyOptions } from 'n8n-workflow';
import { mediaFieldsOf, parseInputSchema, readSchemaForm } from '../../../shared';
import { toNodeError } from '../helpers/errors';
import { managementClient } from '../transport';

/**
 * The media fields of the chosen endpoint's input (URLs of files GPU Cloud downloads, marked so in
 * the schema it publishes), for "Files for Media Fields"; none for an endpoint without any.
 */
export async function getMediaFields(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	const name = this.getNodeParameter('endpoint', '', { extractValue: true });
	if (typeof name !== 'string' || name.trim() === '') return [];
	try {
		const { client } = await managementClient(this);
		const endpoint = await client.endpoints.get(name.trim());
		const form = readSchemaForm(endpoint.input_schema);
		const titles = new Map(
			form.kind === 'fields' ? form.fields.map((field) => [field.name, field.title]) : [],
		);
		return mediaFieldsOf(parseInputSchema(endpoint.input_schema)).map(({ field, accept }) => ({
			name: titles.get(field) ?? field,
			value: field,
			description: `A file of type ${accept}`,
		}));
	} catch (error) {
		throw toNodeError(this.getNode(), error, 0);
	}
}
