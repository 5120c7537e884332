import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, type Standin } from './server';

/**
 * Slack's side of installing one app in several workspaces, on loopback: the consent page
 * (`GET /oauth/v2/authorize`, which approves at once for the workspace the browser is signed in to
 * and sends it back to the app's redirect URL with a one-time code and the app's state), the code
 * exchange (`POST /api/oauth.v2.access`, client id and secret checked, each code used once, within
 * 10 minutes, for the redirect URL it was issued for), and the Web API of each workspace: a call
 * goes to the stand-in of the workspace whose bot token it carries, so a token only works in its
 * own workspace. Each workspace is a Standin of its own, or several share one (each in channels of
 * its own): thousands of workspaces then cost an entry each in two maps, found by team or by token
 * in constant time. Its team id is the one given here.
 */

export interface OAuthWorkspace {
	team: { id: string; name: string };
	standin: Standin;
	/** The token that stand-in was started with (calls are forwarded to it with that token). */
	standinToken: string;
	/** The bot token Slack issues to the app in this workspace at install. */
	botToken: string;
	botUserId: string;
	/** Users Slack reports as workspace admins (users.info `is_admin`). */
	admins: string[];
}

export interface OAuthStandinOptions {
	clientId: string;
	clientSecret: string;
	workspaces: OAuthWorkspace[];
}

const CODE_LIFETIME_MS = 10 * 60 * 1000;

interface IssuedCode {
	team: string;
	redirectUri?: string;
	scopes: string;
	expiresAt: number;
}

export class OAuthStandin {
	private readonly server: Server;
	private readonly codes = new Map<string, IssuedCode>();
	private signedIn?: string;
	private origin = '';
	/** Every code exchange, for assertions. */
	readonly exchanges: { team: string; ok: boolean; error?: string }[] = [];
	private readonly byTeam = new Map<string, OAuthWorkspace>();
	/** By a digest of the bot token: a look-up that tells nothing of how close a wrong token came. */
	private readonly byToken = new Map<string, OAuthWorkspace>();

	constructor(private readonly options: OAuthStandinOptions) {
		for (const workspace of options.workspaces) {
			this.byTeam.set(workspace.team.id, workspace);
			this.byToken.set(tokenDigest(workspace.botToken), workspace);
		}
		this.server = createServer((req, res) => {
			this.route(req, res).catch(() => {
				if (!res.headersSent) reply(res, 500, { ok: false, error: 'internal_error' });
			});
		});
	}

	static async start(options: OAuthStandinOptions): Promise<OAuthStandin> {
		const standin = new OAuthStandin(options);
		await new Promise<void>((resolve, reject) => {
			standin.server.once('error', reject);
			standin.server.listen(0, '127.0.0.1', () => resolve());
		});
		standin.origin = `http://127.0.0.1:${(standin.server.address() as AddressInfo).port}`;
		return standin;
	}

	/** The Web API root the app is given (`SLACK_API_URL`). */
	get apiUrl(): string {
		return `${this.origin}/api/`;
	}

	get authorizationUrl(): string {
		return `${this.origin}/oauth/v2/authorize`;
	}

	/** The workspace the person in the browser is signed in to: the one the consent page installs into. */
	signIn(team: string): void {
		if (!this.workspace(team)) throw new Error(`No stand-in workspace ${team}.`);
		this.signedIn = team;
	}

	async close(): Promise<void> {
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
	}

	private workspace(team: string): OAuthWorkspace | undefined {
		return this.byTeam.get(team);
	}

	private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const url = new URL(req.url ?? '/', this.origin);
		if (req.method === 'GET' && url.pathname === '/oauth/v2/authorize')
			return this.authorize(url, res);
		const method = url.pathname.startsWith('/api/')
			? url.pathname.slice('/api/'.length)
			: undefined;
		if (req.method !== 'POST' || !method)
			return reply(res, 404, { ok: false, error: 'unknown_method' });
		const body = await readBody(req);
		if (method === 'oauth.v2.access') return this.exchange(req, body, res);
		const token =
			req.headers.authorization?.replace(/^Bearer\s+/i, '') ??
			new URLSearchParams(body.toString('utf8')).get('token') ??
			undefined;
		const workspace = token === undefined ? undefined : this.byToken.get(tokenDigest(token));
		if (!workspace)
			return reply(res, 200, {
				ok: false,
				error: token ? 'invalid_auth' : 'not_authed',
			});
		if (method === 'users.info') return this.userInfo(workspace, body, res);
		// The workspace's own stand-in answers everything else, with its token.
		const forwarded = await fetch(`${workspace.standin.apiUrl}${method}`, {
			method: 'POST',
			headers: {
				'content-type': req.headers['content-type'] ?? 'application/x-www-form-urlencoded',
				authorization: `Bearer ${workspace.standinToken}`,
			},
			body,
		});
		res.writeHead(forwarded.status, {
			'content-type': forwarded.headers.get('content-type') ?? 'application/json',
			...(forwarded.headers.get('retry-after')
				? { 'retry-after': forwarded.headers.get('retry-after') ?? '' }
				: {}),
		});
		res.end(Buffer.from(await forwarded.arrayBuffer()));
	}

	private authorize(url: URL, res: ServerResponse): void {
		const params = url.searchParams;
		const fail = (text: string) =>
			void res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
		if (params.get('client_id') !== this.options.clientId) return fail('Unknown client_id.');
		const state = params.get('state');
		const redirectUri = params.get('redirect_uri') ?? undefined;
		if (!state) return fail('The state parameter is missing.');
		if (!redirectUri)
			return fail(
				'This stand-in needs redirect_uri (the app has no Redirect URL configured here).',
			);
		if (!this.signedIn) return fail('Nobody is signed in to a workspace.');
		const code = `${this.signedIn}.${randomBytes(16).toString('hex')}`;
		this.codes.set(code, {
			team: this.signedIn,
			redirectUri,
			scopes: params.get('scope') ?? '',
			expiresAt: Date.now() + CODE_LIFETIME_MS,
		});
		const back = new URL(redirectUri);
		back.searchParams.set('code', code);
		back.searchParams.set('state', state);
		res.writeHead(302, { location: back.toString() }).end();
	}

	private exchange(req: IncomingMessage, body: Buffer, res: ServerResponse): void {
		const params = new URLSearchParams(body.toString('utf8'));
		const basic = req.headers.authorization?.match(/^Basic\s+(.+)$/i)?.[1];
		const [basicId, basicSecret] = basic
			? Buffer.from(basic, 'base64').toString('utf8').split(':')
			: [];
		const clientId = params.get('client_id') ?? basicId;
		const clientSecret = params.get('client_secret') ?? basicSecret;
		const code = params.get('code') ?? '';
		const issued = this.codes.get(code);
		this.codes.delete(code);
		const failure = (error: string) => {
			this.exchanges.push({ team: issued?.team ?? '', ok: false, error });
			reply(res, 200, { ok: false, error });
		};
		if (clientId !== this.options.clientId) return failure('invalid_client_id');
		if (!clientSecret || !same(clientSecret, this.options.clientSecret))
			return failure('bad_client_secret');
		if (!issued || issued.expiresAt < Date.now()) return failure('invalid_code');
		if (issued.redirectUri !== undefined && params.get('redirect_uri') !== issued.redirectUri)
			return failure('bad_redirect_uri');
		const workspace = this.workspace(issued.team);
		if (!workspace) return failure('invalid_code');
		this.exchanges.push({ team: workspace.team.id, ok: true });
		reply(res, 200, {
			ok: true,
			app_id: 'A0GPUCLOUD',
			authed_user: { id: workspace.admins[0] ?? 'U0INSTALLER' },
			scope: issued.scopes,
			token_type: 'bot',
			access_token: workspace.botToken,
			bot_user_id: workspace.botUserId,
			team: workspace.team,
			enterprise: null,
			is_enterprise_install: false,
		});
	}

	private userInfo(workspace: OAuthWorkspace, body: Buffer, res: ServerResponse): void {
		const user = new URLSearchParams(body.toString('utf8')).get('user');
		if (!user) return reply(res, 200, { ok: false, error: 'user_not_found' });
		const admin = workspace.admins.includes(user);
		reply(res, 200, {
			ok: true,
			user: {
				id: user,
				team_id: workspace.team.id,
				name: user.toLowerCase(),
				is_admin: admin,
				is_owner: false,
				is_primary_owner: false,
				is_bot: false,
			},
		});
	}
}

function tokenDigest(token: string): string {
	return createHash('sha256').update(token).digest('base64');
}

function same(a: string, b: string): boolean {
	const left = Buffer.from(a);
	const right = Buffer.from(b);
	return left.length === right.length && timingSafeEqual(left, right);
}

function reply(res: ServerResponse, status: number, body: object): void {
	res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
	res.end(JSON.stringify(body));
}
