import type { types } from '@slack/bolt';

/** The few domain types the services and the Block Kit renderers share. */

export type KnownBlock = types.KnownBlock;
export type ModalView = types.ModalView;

/** What a user asked for; each kind gets one parent message in the channel. */
export type RequestKind = 'job' | 'transcribe' | 'image' | 'chat' | 'queue';

/** Job statuses plus `interrupted`: work the app lost track of (a restart during a synchronous call). */
export type RequestState =
	| 'pending'
	| 'running'
	| 'succeeded'
	| 'failed'
	| 'cancelled'
	| 'interrupted';

export interface ThreadRef {
	channel: string;
	/** The parent message; every result goes into its thread. */
	threadTs: string;
	/**
	 * Set when the request's parent is a reply in a thread whose root is not the app's (the thread of
	 * a file someone shared): the parent is edited there, the results still go into `threadTs`.
	 */
	parentTs?: string;
}

/** A Slack message as the renderers produce it: fallback text for notifications plus blocks. */
export interface SlackMessage {
	text: string;
	blocks: KnownBlock[];
}

/** A text file to upload into a thread (long job output, full transcripts). */
export interface FileSpec {
	filename: string;
	title: string;
	content: Buffer;
	altText?: string;
}

/**
 * A result as a list of parts. Each part has a key that stays visible in the thread (a message's
 * metadata or a file's name), so re-posting after a crash skips the parts Slack already has.
 */
export type ResultPart =
	| { kind: 'message'; key: string; message: SlackMessage }
	| { kind: 'file'; key: string; file: FileSpec };

/** Where the app serves files shared in Slack to GPU Cloud, under its public address (requests/file-links.ts). */
export const FILE_LINK_PATH = '/slack/files';
