import type { ListedEndpoint } from '../../emulator';

/**
 * Endpoints as a large organization publishes them, made by code: names, prices, one-line
 * descriptions, long readmes and JSON Schemas of 2-10 fields (strings with bounds, numbers with
 * ranges, enums), for answers that must stay within a budget at hundreds of endpoints.
 */
export function generatedEndpoints(count: number): ListedEndpoint[] {
	const kinds = ['translate', 'classify', 'embed', 'detect', 'upscale', 'segment', 'caption'];
	return Array.from({ length: count }, (_, n) => {
		const kind = kinds[n % kinds.length];
		const fields = 2 + (n % 9);
		const properties: Record<string, unknown> = {
			text: { type: 'string', minLength: 1, maxLength: 20000, description: 'The text to work on.' },
		};
		for (let field = 1; field < fields; field++)
			properties[`option_${field}`] =
				field % 3 === 0
					? { type: 'string', enum: ['fast', 'balanced', 'accurate'] }
					: { type: field % 2 ? 'integer' : 'number', minimum: 0, maximum: 100 * field };
		return {
			id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
			name: `${kind}-model-${n}`,
			display_name: `${kind[0].toUpperCase()}${kind.slice(1)} model ${n}`,
			description: `Runs the ${kind} model version ${n % 5}.${n % 7} on a GPU; tuned for general text in 40 languages, batch friendly, answers in JSON.`,
			readme: `# ${kind} model ${n}. ${'Detailed usage notes and examples. '.repeat(40)}`,
			price_description: `$0.${String(10 + (n % 80)).padStart(3, '0')} per 1,000 characters`,
			icon_url: `https://static.example.com/icons/${kind}.svg`,
			input_schema: JSON.stringify({
				type: 'object',
				required: ['text'],
				additionalProperties: false,
				properties,
			}),
			output_schema: JSON.stringify({
				type: 'object',
				properties: { result: { type: 'string' }, score: { type: 'number' } },
			}),
		};
	});
}
