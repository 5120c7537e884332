import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod/v4';
import { SHORTCUTS } from '../../slack-app/messages/actions';
import { SUGGESTED_PROMPTS } from '../../slack-app/messages/assistant';
import { BOT_SCOPES } from '../../slack-app/workspaces/distribution';
import { SHORTCUTS as STANDIN_SHORTCUTS } from '../../slack-standin/workspace';

/** The manifest declares what the app listens for; the stand-in offers what the manifest declares. */

const manifestSchema = z.looseObject({
	features: z.looseObject({
		app_home: z.looseObject({
			home_tab_enabled: z.boolean(),
			messages_tab_enabled: z.boolean(),
			messages_tab_read_only_enabled: z.boolean(),
		}),
		assistant_view: z.looseObject({
			assistant_description: z.string().min(1),
			suggested_prompts: z.array(z.object({ title: z.string(), message: z.string() })),
		}),
		shortcuts: z.array(
			z.looseObject({
				name: z.string(),
				type: z.enum(['global', 'message']),
				callback_id: z.string(),
				description: z.string(),
			}),
		),
	}),
	oauth_config: z.looseObject({ scopes: z.looseObject({ bot: z.array(z.string()) }) }),
	settings: z.looseObject({
		event_subscriptions: z.looseObject({ bot_events: z.array(z.string()) }),
	}),
});

const manifest = manifestSchema.parse(
	parse(readFileSync(join(__dirname, '..', '..', 'slack-app', 'manifest.yaml'), 'utf8')),
);

it('declares both shortcuts with the callback ids the app listens for, as the stand-in offers them', () => {
	const declared = manifest.features.shortcuts.map(({ type, callback_id, name }) => ({
		type,
		callbackId: callback_id,
		name,
	}));
	expect(declared).toEqual(STANDIN_SHORTCUTS);
	expect(declared.map((shortcut) => shortcut.callbackId).sort()).toEqual(
		Object.values(SHORTCUTS).sort(),
	);
});

it('enables the Home and Messages tabs and the assistant view, with the scopes and events they need', () => {
	expect(manifest.features.app_home).toEqual({
		home_tab_enabled: true,
		messages_tab_enabled: true,
		messages_tab_read_only_enabled: false,
	});
	expect(manifest.oauth_config.scopes.bot).toEqual(
		expect.arrayContaining([
			'commands',
			'chat:write',
			'im:history',
			'users:read',
			'assistant:write',
		]),
	);
	expect(manifest.settings.event_subscriptions.bot_events).toEqual(
		expect.arrayContaining(['message.im', 'app_home_opened', 'assistant_thread_started']),
	);
});

it('suggests in the manifest the prompts the app sets on each new assistant thread', () => {
	expect(manifest.features.assistant_view.suggested_prompts).toEqual(SUGGESTED_PROMPTS);
});

it('asks a workspace installing through OAuth for exactly the bot scopes of the manifest', () => {
	expect([...BOT_SCOPES].sort()).toEqual([...manifest.oauth_config.scopes.bot].sort());
});
