import { headerValue, problem, type Reply, type RequestContext } from './http';

/**
 * The container gateway in front of a workload: with `networking.auth` on, every request needs the
 * caller's API key. Its refusals come from the service's edge, so they are problem details. The
 * interface document does not say the key must belong to the deploying organization, so a key of
 * any of the emulator's organizations passes.
 */
export function gatewayRefusal(
	ctx: RequestContext,
	apiKeys: readonly string[],
	required: boolean,
): Reply | undefined {
	if (!required) return undefined;
	const key = headerValue(ctx.req, 'service-api-key');
	if (!key)
		return problem(
			401,
			'This workload requires the Service-Api-Key header (gateway authentication is on).',
			ctx.path,
		);
	if (!apiKeys.includes(key))
		return problem(401, 'The Service-Api-Key header does not hold a valid API key.', ctx.path);
	return undefined;
}
