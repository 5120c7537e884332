import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod/v4';
import { MANIFEST_PATH } from '../../slack-standin/app-config';

const features = z.looseObject({
	features: z.looseObject({
		agent_view: z.looseObject({ suggested_prompts: z.array(z.unknown()) }),
	}),
	settings: z.looseObject({
		event_subscriptions: z.looseObject({ bot_events: z.array(z.string()) }),
	}),
});

/**
 * The manifest of an installation made before agent messaging: today's, with the assistant
 * container (`assistant_view`, `assistant_thread_started`) in place of agent_view and the stop button.
 */
export function legacyManifest(): unknown {
	const manifest = features.parse(parse(readFileSync(MANIFEST_PATH, 'utf8')));
	const { agent_view, ...otherFeatures } = manifest.features;
	return {
		...manifest,
		features: {
			...otherFeatures,
			assistant_view: {
				assistant_description: 'Ask the model this workspace runs on GPU Cloud.',
				suggested_prompts: agent_view.suggested_prompts,
			},
		},
		settings: {
			...manifest.settings,
			event_subscriptions: {
				...manifest.settings.event_subscriptions,
				bot_events: [
					...manifest.settings.event_subscriptions.bot_events.filter(
						(event) => event !== 'agent_session_stopped',
					),
					'assistant_thread_started',
				],
			},
		},
	};
}
