import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { LIMITS } from '../../../shared';
import { managementClient } from '../transport';
import { toNodeError } from '../helpers/errors';

/**
 * The endpoint catalogue for the "From List" mode, one API page per call. The API cannot search,
 * so the filter is applied to each page; the pagination token is the next page number.
 */
export async function searchEndpoints(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const page = paginationToken ? Number(paginationToken) : 1;
	if (!Number.isInteger(page) || page < 1)
		throw new NodeOperationError(
			this.getNode(),
			`Unexpected page "${paginationToken}" while listing endpoints.`,
		);
	const wanted = filter?.trim().toLowerCase() ?? '';
	try {
		const { client } = await managementClient(this);
		const result = await client.endpoints.list({ page, page_size: LIMITS.pageSizeMax });
		const matches = result.items.filter(
			(endpoint) =>
				!wanted ||
				endpoint.name.includes(wanted) ||
				endpoint.display_name.toLowerCase().includes(wanted),
		);
		return {
			results: matches.map((endpoint) => ({
				name:
					endpoint.display_name === endpoint.name
						? endpoint.name
						: `${endpoint.display_name} (${endpoint.name})`,
				value: endpoint.name,
				description: endpoint.description || undefined,
			})),
			paginationToken: page * result.page_size < result.total_size ? String(page + 1) : undefined,
		};
	} catch (error) {
		throw toNodeError(this.getNode(), error, 0);
	}
}
