import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod/v4';
import { SHORTCUTS } from '../../slack-app/messages/actions';
import { SUGGESTED_PROMPTS } from '../../slack-app/messages/assistant';
import { BOT_SCOPES } from '../../slack-app/workspaces/distribution';
import { SHORTCUTS as STANDIN_SHORTCUTS } from '../../slack-standin/workspace';
import { createApp, MANIFEST_PATH, ManifestRefused } from '../../slack-standin/app-config';
import { legacyManifest } from './legacy-app';

/** The manifest declares what the app listens for; the stand-in offers what the manifest declares. */

const manifestSchema = z.looseObject({
	features: z.looseObject({
		app_home: z.looseObject({
			home_tab_enabled: z.boolean(),
			messages_tab_enabled: z.boolean(),
			messages_tab_read_only_enabled: z.boolean(),
		}),
		agent_view: z.looseObject({
			agent_description: z.string().min(1).max(300),
			suggested_prompts: z.array(z.object({ title: z.string(), message: z.string() })).max(4),
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

it('declares the shortcuts with the callback ids the app listens for, as the stand-in offers them', () => {
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

it('enables the Home and Messages tabs and agent messaging, with the scopes and events they need', () => {
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
		expect.arrayContaining(['message.im', 'app_home_opened', 'agent_session_stopped']),
	);
	// Slack sends it only to apps created with the assistant container.
	expect(manifest.settings.event_subscriptions.bot_events).not.toContain(
		'assistant_thread_started',
	);
});

it('suggests in the manifest the prompts the app sets at the top of its Messages tab', () => {
	expect(manifest.features.agent_view.suggested_prompts).toEqual(SUGGESTED_PROMPTS);
});

describe('creating the app from it, as Slack does', () => {
	const raw: unknown = parse(readFileSync(MANIFEST_PATH, 'utf8'));
	const withAssistantView = legacyManifest();

	it('is accepted as a new app, with agent messaging and the stop button subscribed', () => {
		const app = createApp({ manifest: raw });
		expect(app.experience).toBe('agent');
		expect(app.botEvents.has('agent_session_stopped')).toBe(true);
	});

	it('is refused as a new app when it still declares assistant_view, naming the field', () => {
		expect(() => createApp({ manifest: withAssistantView })).toThrow(ManifestRefused);
		expect(() => createApp({ manifest: withAssistantView })).toThrow(
			/\/features\/assistant_view: New apps can only use the agent messaging experience/,
		);
	});

	it('keeps assistant_view for an app created before agent messaging', () => {
		const app = createApp({ manifest: withAssistantView, createdBeforeAgentMessaging: true });
		expect(app.experience).toBe('assistant');
	});

	it("refuses more than four suggested prompts, as Slack's manifest schema does", () => {
		const tooMany = structuredClone(manifest);
		tooMany.features.agent_view.suggested_prompts = Array.from({ length: 5 }, (_, i) => ({
			title: `Prompt ${i}`,
			message: 'Hello',
		}));
		expect(() => createApp({ manifest: tooMany })).toThrow(/suggested_prompts/);
	});
});

it('asks a workspace installing through OAuth for exactly the bot scopes of the manifest', () => {
	expect([...BOT_SCOPES].sort()).toEqual([...manifest.oauth_config.scopes.bot].sort());
});
