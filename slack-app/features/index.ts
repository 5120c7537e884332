import type { Logger } from '@slack/bolt';
import type { AccessPolicy } from '../requests/access';
import type { AgentConversations } from './agent-conversations';
import type { ChatService } from './chat';
import type { CommandRouter } from './commands';
import type { FileTranscription } from './file-transcription';
import type { HomeTab } from './home';
import type { ImageService } from './images';
import type { JobForm } from './job-form';
import type { JobService } from './jobs';

/** What the listeners may call: one object, handed to every `register` function. */
export interface AppServices {
	router: CommandRouter;
	jobs: JobService;
	jobForm: JobForm;
	images: ImageService;
	chat: ChatService;
	conversations: AgentConversations;
	access: AccessPolicy;
	home: HomeTab;
	logger: Logger;
	/** Files shared in Slack, transcribed (the message shortcut, the workflow step). */
	files: FileTranscription;
}
