export { startStandin, Standin, RESPONSE_URL_MAX_USES, type StandinOptions } from './server';
export { slackSignature, type AppReply } from './app-link';
export {
	BOT,
	TEAM,
	LOCAL_USER,
	DEFAULT_CHANNEL,
	DIRECT_MESSAGE,
	UNINVITED_CHANNEL,
	SHORTCUTS,
	type StoredMessage,
	type StoredFile,
	type EphemeralMessage,
} from './workspace';
