/**
 * One error hierarchy for everything the service or our checks can say. Every error carries a
 * one-line human message; none ever carries the API key (requests are described by method and path).
 */

export interface RequestDescription {
	method: string;
	/** Path and query relative to the base URL: never the host's credentials or headers. */
	path: string;
}

export interface ErrorDetails {
	status?: number;
	title?: string;
	detail?: string;
	request?: RequestDescription;
	requestId?: string;
	cause?: unknown;
}

export class GpuCloudError extends Error {
	readonly status?: number;
	readonly title?: string;
	readonly detail?: string;
	readonly request?: RequestDescription;
	readonly requestId?: string;

	constructor(message: string, details: ErrorDetails = {}) {
		super(message, details.cause === undefined ? undefined : { cause: details.cause });
		this.name = new.target.name;
		this.status = details.status;
		this.title = details.title;
		this.detail = details.detail;
		this.request = details.request;
		this.requestId = details.requestId;
	}

	/** Whether trying the same request again later may succeed. */
	get retryable(): boolean {
		return false;
	}
}

export interface FieldIssue {
	/** Dotted path of the field, e.g. `input.url` or `messages.0.role`. */
	field: string;
	/** The rule the value broke, e.g. `must be at most 500 characters`. */
	rule: string;
	/** A short preview of the offending value, when there was one. */
	received?: string;
}

/** Input broke a rule; raised before any request is sent. */
export class ValidationError extends GpuCloudError {
	readonly issues: FieldIssue[];
	constructor(issues: FieldIssue[], subject?: string) {
		super(ValidationError.describe(issues, subject));
		this.issues = issues;
	}

	static describe(issues: FieldIssue[], subject?: string): string {
		const parts = issues.map((issue) => {
			const field = [subject, issue.field].filter(Boolean).join(' ');
			const value = issue.received === undefined ? '' : ` ${issue.received}`;
			return `${field || 'value'}${value} ${issue.rule}`;
		});
		return parts.join('; ');
	}
}

/** The service refused the request as malformed (400, 409, 422). */
export class BadRequestError extends GpuCloudError {}
/** 401: the API key is missing or wrong. */
export class AuthenticationError extends GpuCloudError {}
/** 403: the key is valid but not allowed here (for example not a member of the organization). */
export class PermissionError extends GpuCloudError {}
/** 404: the organization, project, endpoint or job does not exist. */
export class NotFoundError extends GpuCloudError {}

/** 429: too many requests; retried automatically, raised only when retries ran out. */
export class RateLimitError extends GpuCloudError {
	readonly retryAfterMs?: number;
	constructor(message: string, details: ErrorDetails & { retryAfterMs?: number } = {}) {
		super(message, details);
		this.retryAfterMs = details.retryAfterMs;
	}
	override get retryable(): boolean {
		return true;
	}
}

/** 5xx, or any other unexpected status. */
export class ServerError extends GpuCloudError {
	override get retryable(): boolean {
		return this.status === undefined || this.status >= 500 || this.status === 408;
	}
}

/** The reply arrived but is not what the interface promises (malformed JSON, missing fields). */
export class ResponseFormatError extends GpuCloudError {
	override get retryable(): boolean {
		return true;
	}
}

/** A single request took longer than its timeout. */
export class TimeoutError extends GpuCloudError {
	override get retryable(): boolean {
		return true;
	}
}

/** The connection failed (refused, reset, DNS). */
export class NetworkError extends GpuCloudError {
	override get retryable(): boolean {
		return true;
	}
}

/** The caller aborted the operation. */
export class AbortedError extends GpuCloudError {}

/** Waiting for a job to finish took longer than allowed; the job may still finish later. */
export class WaitTimeoutError extends GpuCloudError {
	readonly jobId: string;
	readonly lastStatus: string;
	constructor(message: string, jobId: string, lastStatus: string) {
		super(message);
		this.jobId = jobId;
		this.lastStatus = lastStatus;
	}
}

/** The job ended `failed`; `output` holds what the service reported (often `{ error }`). */
export class JobFailedError extends GpuCloudError {
	readonly jobId: string;
	readonly output: unknown;
	constructor(message: string, jobId: string, output: unknown) {
		super(message);
		this.jobId = jobId;
		this.output = output;
	}
}

/** The job ended `cancelled`. */
export class JobCancelledError extends GpuCloudError {
	readonly jobId: string;
	constructor(message: string, jobId: string) {
		super(message);
		this.jobId = jobId;
	}
}

/** A chat stream reported an error after it had started (`data: {"error": ...}`). */
export class StreamError extends GpuCloudError {
	readonly errorType?: string;
	constructor(message: string, details: ErrorDetails & { errorType?: string } = {}) {
		super(message, details);
		this.errorType = details.errorType;
	}
}
