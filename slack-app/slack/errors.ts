import { GpuCloudError } from '../../shared/errors';
import { SlackAnswerLost } from './slack-client';

/** The words to show a person for a failure: the service's own detail when it gave one. */
export function describeError(error: unknown): string {
	if (error instanceof GpuCloudError) return error.detail ?? error.message;
	const slack = slackErrorCode(error);
	if (slack) return `Slack answered "${slack}".`;
	if (error instanceof SlackAnswerLost) return 'Slack did not answer in time.';
	return 'Something unexpected went wrong; the app logged the details.';
}

/**
 * Slack's errors that asking again later may cure (https://docs.slack.dev/apis/web-api/#errors);
 * any other refusal stays the same however often the call is made.
 */
const SLACK_TRANSIENT_ERRORS = new Set([
	'ratelimited',
	'request_timeout',
	'service_unavailable',
	'fatal_error',
	'internal_error',
]);

/** A Web API error code that asking again cannot change (`not_in_channel`, `invalid_auth`, ...). */
export function isLastingRefusal(code: string): boolean {
	return !SLACK_TRANSIENT_ERRORS.has(code);
}

/** The `error` of a Slack Web API refusal (`not_in_channel`, `ratelimited`, ...), if that is what this is. */
export function slackErrorCode(error: unknown): string | undefined {
	if (!error || typeof error !== 'object') return undefined;
	if (
		'data' in error &&
		error.data &&
		typeof error.data === 'object' &&
		'error' in error.data &&
		typeof error.data.error === 'string'
	) {
		return error.data.error;
	}
	if ('code' in error && error.code === 'slack_webapi_rate_limited_error') return 'ratelimited';
	return undefined;
}

/** For logs: the message only, which by construction names no secret. */
export function errorSummary(error: unknown): string {
	return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
