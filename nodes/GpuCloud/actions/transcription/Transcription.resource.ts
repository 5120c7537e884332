import type { INodeProperties } from 'n8n-workflow';
import * as transcribe from './transcribe.operation';

export { transcribe };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['transcription'] } },
		options: [
			{
				name: 'Transcribe Audio',
				value: 'transcribe',
				description:
					'Turn speech in an audio or video file into text, with optional summary, translations and subtitles',
				action: 'Transcribe audio',
			},
		],
		default: 'transcribe',
	},
	...transcribe.description,
];
