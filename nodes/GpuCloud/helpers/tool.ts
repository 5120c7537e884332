import type { IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';
import { ExecutionBaseError } from 'n8n-workflow';
import {
	AbortedError,
	AuthenticationError,
	GpuCloudError,
	JobCancelledError,
	JobFailedError,
	NotFoundError,
	PermissionError,
	ValidationError,
	WaitTimeoutError,
} from '../../../shared';

/**
 * Whether the node runs as a tool of an AI agent or an MCP client. n8n serves a `usableAsTool`
 * node to agents as a type of its own, `<package>.<name>Tool`, and runs that type both when the AI
 * Agent asks the engine to run the tool (an ordinary execute context) and when the MCP Server
 * Trigger invokes it (a supply-data context): the type's name is the one mark both paths carry.
 */
export function isToolRun(context: IExecuteFunctions | IWebhookFunctions): boolean {
	return context.getNode().type.split('.').pop()?.endsWith('Tool') ?? false;
}

/**
 * The first line of a message as a sentence, without the request's HTTP status and path, which
 * the service's messages end with for people debugging a workflow, not for a model.
 */
function sentence(text: string): string {
	const line = text
		.split('\n', 1)[0]
		.replace(/\s*\[HTTP [^\]]*\]$/, '')
		.trim();
	return /[.!?]$/.test(line) ? line : `${line}.`;
}

/** A sentence and what to do about it, as one sentence. */
function withAdvice(text: string, advice: string): string {
	return `${sentence(text).slice(0, -1)}: ${advice}`;
}

/**
 * What a model reads when its call failed: one sentence saying what went wrong and what to do, so
 * it can fix its arguments or tell the person; never a stack or n8n's error wrapping. `error` is
 * what the operation threw, before it became n8n's error.
 */
export function toolErrorSentence(error: unknown): string {
	if (error instanceof ValidationError)
		return withAdvice(
			error.message,
			'nothing was sent to GPU Cloud; call again with a value that follows the rule.',
		);
	if (error instanceof NotFoundError)
		return withAdvice(
			error.message,
			'check the name or id (Inference Endpoint > Get Many lists the endpoint names).',
		);
	if (error instanceof AuthenticationError || error instanceof PermissionError)
		return withAdvice(
			error.message,
			'the GPU Cloud credential of this workflow must be fixed by its owner; calling again will not help.',
		);
	if (error instanceof JobFailedError || error instanceof JobCancelledError)
		return `${sentence(error.message).slice(0, -1)} (job ${error.jobId}).`;
	if (error instanceof WaitTimeoutError)
		return withAdvice(
			error.message,
			`the job keeps running; read it later with Job > Get and job id ${error.jobId}.`,
		);
	if (error instanceof AbortedError) return sentence(error.message);
	if (error instanceof GpuCloudError) return sentence(error.message);
	// n8n's own errors (an expression, a parameter n8n checked) and the input-schema check.
	if (error instanceof ExecutionBaseError) return sentence(error.message);
	return sentence(error instanceof Error ? error.message : String(error));
}
