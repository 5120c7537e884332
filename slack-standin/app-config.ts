import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod/v4';

/**
 * The app as Slack knows it: created from its manifest, which decides what Slack will do for it.
 * Slack sends only the events the app subscribes to, and since July 2026 creates new apps with the
 * agent messaging experience only ("New apps can only use the agent messaging experience":
 * https://docs.slack.dev/ai/migrating-to-agent-messaging); an app created before keeps its
 * `assistant_view` for now.
 */

export const MANIFEST_PATH = join(__dirname, '..', 'slack-app', 'manifest.yaml');

const promptSchema = z.object({ title: z.string().min(1), message: z.string().min(1) });

// Limits from Slack's manifest schema (agent_view: agent_description at most 300 characters, at
// most four suggested prompts; https://docs.slack.dev/reference/app-manifest).
const agentViewSchema = z.object({
	agent_description: z.string().max(300).optional(),
	suggested_prompts: z.array(promptSchema).max(4).optional(),
	actions: z.array(z.object({ name: z.string(), description: z.string() })).optional(),
});

const assistantViewSchema = z.object({
	assistant_description: z.string().min(1),
	suggested_prompts: z.array(promptSchema).max(4).optional(),
});

const parametersSchema = z.object({
	properties: z.record(
		z.string(),
		z.looseObject({ type: z.string().min(1), title: z.string().optional() }),
	),
	required: z.array(z.string()).optional(),
});

/** A custom step as the manifest defines it (https://docs.slack.dev/tools/bolt-js/concepts/custom-steps). */
const functionSchema = z.looseObject({
	title: z.string().min(1),
	description: z.string().optional(),
	input_parameters: parametersSchema,
	output_parameters: parametersSchema,
});

const manifestSchema = z.looseObject({
	functions: z.record(z.string(), functionSchema).optional(),
	features: z
		.looseObject({
			agent_view: agentViewSchema.optional(),
			assistant_view: assistantViewSchema.optional(),
		})
		.optional(),
	oauth_config: z
		.looseObject({ scopes: z.looseObject({ bot: z.array(z.string()).optional() }).optional() })
		.optional(),
	settings: z
		.looseObject({
			event_subscriptions: z.looseObject({ bot_events: z.array(z.string()).optional() }).optional(),
		})
		.optional(),
});

/** How people talk to the app: the Messages tab's agent threads, the older assistant container, or neither. */
export type MessagingExperience = 'agent' | 'assistant' | 'none';

export type StepDefinition = z.infer<typeof functionSchema>;

export interface StandinAppConfig {
	experience: MessagingExperience;
	/** Workflow Builder steps, by callback id. */
	functions: ReadonlyMap<string, StepDefinition>;
	botEvents: ReadonlySet<string>;
	botScopes: ReadonlySet<string>;
	suggestedPrompts: readonly { title: string; message: string }[];
}

/** Slack's refusal of a manifest, with its `errors[]` pointers as `apps.manifest.validate` answers. */
export class ManifestRefused extends Error {
	constructor(readonly errors: { message: string; pointer: string }[]) {
		super(
			`invalid_manifest: ${errors.map((error) => `${error.pointer}: ${error.message}`).join('; ')}`,
		);
	}
}

export interface CreateAppOptions {
	/** The manifest as parsed YAML or JSON; the repository's slack-app/manifest.yaml by default. */
	manifest?: unknown;
	/** The app was created before agent messaging (July 2026), so its `assistant_view` stays. */
	createdBeforeAgentMessaging?: boolean;
}

/** Creates the app from its manifest as Slack does, or refuses it as Slack would. */
export function createApp(options: CreateAppOptions = {}): StandinAppConfig {
	const raw = options.manifest ?? parse(readFileSync(MANIFEST_PATH, 'utf8'));
	const parsed = manifestSchema.safeParse(raw);
	if (!parsed.success)
		throw new ManifestRefused(
			parsed.error.issues.map((issue) => ({
				message: issue.message,
				pointer: `/${issue.path.join('/')}`,
			})),
		);
	const { features, oauth_config, settings, functions } = parsed.data;
	const errors: { message: string; pointer: string }[] = [];
	if (features?.assistant_view && !options.createdBeforeAgentMessaging)
		errors.push({
			pointer: '/features/assistant_view',
			message:
				'New apps can only use the agent messaging experience: declare features.agent_view (with agent_description) instead.',
		});
	if (features?.assistant_view && features.agent_view)
		errors.push({
			pointer: '/features',
			message: 'An app has either agent_view or assistant_view, not both.',
		});
	if (errors.length > 0) throw new ManifestRefused(errors);
	const view = features?.agent_view ?? features?.assistant_view;
	return {
		experience: features?.agent_view ? 'agent' : features?.assistant_view ? 'assistant' : 'none',
		functions: new Map(Object.entries(functions ?? {})),
		botEvents: new Set(settings?.event_subscriptions?.bot_events ?? []),
		botScopes: new Set(oauth_config?.scopes?.bot ?? []),
		suggestedPrompts: view?.suggested_prompts ?? [],
	};
}

/** The bot event a delivery needs: message events by where they were posted, others by type. */
export function subscriptionFor(event: { type: string; channel_type?: unknown }): string {
	if (event.type !== 'message') return event.type;
	const where: Record<string, string> = { im: 'im', group: 'groups', mpim: 'mpim' };
	const channelType = typeof event.channel_type === 'string' ? event.channel_type : 'channel';
	return `message.${where[channelType] ?? 'channels'}`;
}
