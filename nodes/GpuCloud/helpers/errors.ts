import type { INode, JsonObject } from 'n8n-workflow';
import { ExecutionBaseError, NodeApiError, NodeOperationError } from 'n8n-workflow';
import {
	AbortedError,
	GpuCloudError,
	JobCancelledError,
	JobFailedError,
	ValidationError,
	WaitTimeoutError,
} from '../../../shared';

/**
 * Turns anything an operation throws into the error n8n shows: our checks (a field broke a rule),
 * job outcomes and local waits become NodeOperationError; what the service answered becomes
 * NodeApiError with the service's `detail` as description. Built from messages only, so nothing
 * the request carried (the API key header) can reach the error.
 */
export function toNodeError(node: INode, error: unknown, itemIndex: number): ExecutionBaseError {
	// n8n's own errors (an expression that failed, a parameter n8n validated) are already right.
	if (error instanceof ExecutionBaseError) return error;
	if (error instanceof ValidationError) {
		const description =
			error.issues.length > 1
				? error.issues.map((issue) => `${issue.field}: ${issue.rule}`).join('\n')
				: undefined;
		return new NodeOperationError(node, error.message, { itemIndex, description });
	}
	if (error instanceof JobFailedError) {
		return new NodeOperationError(node, error.message, {
			itemIndex,
			description: `Set "On Failed or Cancelled Job" to "Output the Job" to receive failed jobs as items. Job id: ${error.jobId}`,
		});
	}
	if (error instanceof JobCancelledError) {
		return new NodeOperationError(node, error.message, {
			itemIndex,
			description: `Job id: ${error.jobId}`,
		});
	}
	if (error instanceof WaitTimeoutError) {
		return new NodeOperationError(node, error.message, {
			itemIndex,
			description: `The job keeps running on GPU Cloud. Read it later with the "Get" operation and job id ${error.jobId}, or raise "Timeout (Minutes)".`,
		});
	}
	if (error instanceof AbortedError)
		return new NodeOperationError(node, error.message, { itemIndex });
	if (error instanceof GpuCloudError) {
		const response: JsonObject = { message: error.message };
		if (error.status !== undefined) response.status = error.status;
		if (error.detail !== undefined) response.detail = error.detail;
		if (error.requestId !== undefined) response.requestId = error.requestId;
		const nodeError = new NodeApiError(node, response, {
			itemIndex,
			message: error.message,
			description: error.detail ?? error.title,
			httpCode: error.status === undefined ? undefined : String(error.status),
		});
		// n8n swaps a message naming a system error code (ECONNREFUSED...) for a generic sentence;
		// keep ours, which names the service and the request, and the generic one as the description.
		if (nodeError.message !== error.message) {
			nodeError.description ??= nodeError.message;
			nodeError.message = error.message;
		}
		return nodeError;
	}
	const message = error instanceof Error ? error.message : String(error);
	return new NodeOperationError(node, message, { itemIndex });
}
