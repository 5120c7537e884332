import { ValidationError } from '../../shared/errors';
import { createManagementClient } from '../../shared/runtime';
import { JOB_FORM } from '../../slack-app/messages/modal';
import { Stack } from '../slack/harness';

/**
 * Every bound of the interface, broken once through `/gpu` (signed slash commands over HTTP) and the
 * job form: each gets a private answer naming the option or field and the rule, and
 * `emulator.requests` proves no request left. Then the same bounds at the shared client both the app
 * and the n8n node use. The unknown endpoint is last: only the service's catalogue can tell.
 */

const CHANNEL = 'C0BADINPUT';
const NAME =
	'must be 2-63 lower-case letters, digits or hyphens, starting with a letter and ending with a letter or digit\\.';
const JOB_ID = 'must be a job id \\(a UUID like 3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b\\)\\.';
const URL_RULE = 'must be a full http:\\/\\/ or https:\\/\\/ URL\\.';
const FILE = 'https://files.example/talk.mp3';
const char64 = `a${'b'.repeat(63)}`;

let stack: Stack;

beforeAll(async () => {
	stack = await Stack.start();
});

afterAll(() => stack.close());

/** [what the person typed after /gpu, what the private answer must say]. */
const commands: Array<[string, RegExp]> = [
	// Names (endpoint, queue): 1 and 64 characters, capitals, other characters.
	['job a {}', new RegExp(`^The endpoint name "a" ${NAME}`)],
	[`job ${char64} {}`, new RegExp(`^The endpoint name "ab{39}…" \\(64 characters\\) ${NAME}`)],
	['job Transcribe {}', new RegExp(`^The endpoint name "Transcribe" ${NAME}`)],
	['job my_endpoint {}', new RegExp(`^The endpoint name "my_endpoint" ${NAME}`)],
	['queue q', new RegExp(`^The queue name "q" ${NAME}`)],
	[`queue ${char64}`, new RegExp(`^The queue name "ab{39}…" \\(64 characters\\) ${NAME}`)],
	['queue RenderJobs', new RegExp(`^The queue name "RenderJobs" ${NAME}`)],
	['queue render-jobs-', new RegExp(`^The queue name "render-jobs-" ${NAME}`)],
	['queue', /^Give the queue name\./],
	['queue render jobs', /^The queue name is one word; put a readable name in --display-name\./],
	// Queue description 501, display name 1 and 64.
	[
		`queue render-jobs --description ${'d'.repeat(501)}`,
		/^--description "d{40}…" \(501 characters\) must be at most 500 characters\./,
	],
	['queue render-jobs --display-name Q', /^--display-name "Q" must be 2-63 characters\./],
	[
		`queue render-jobs --display-name ${'Q'.repeat(64)}`,
		/^--display-name "Q{40}…" \(64 characters\) must be 2-63 characters\./,
	],
	['queue render-jobs --display-name', /^--display-name needs a value\./],
	[
		'queue render-jobs --priority high',
		/^Unknown option --priority\. Options: --display-name, --description\./,
	],
	// Job input JSON.
	['job echo {"prompt": ', /^The input is not valid JSON: Unexpected end of JSON input\./],
	['job echo {prompt: 1}', /^The input is not valid JSON: Expected property name/],
	['job echo [1, 2', /^The input is not valid JSON: /],
	['job echo "unterminated', /^The input is not valid JSON: Unterminated string/],
	// Job ids.
	['status 12345', new RegExp(`^The job id "12345" ${JOB_ID}`)],
	['status', /^Give one job id\./],
	[
		'status 3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b 3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6c',
		/^Give one job id\./,
	],
	['cancel not-a-uuid', new RegExp(`^The job id "not-a-uuid" ${JOB_ID}`)],
	[
		'cancel 3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b/../x',
		new RegExp(
			`^The job id "3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b/\\.\\./…" \\(41 characters\\) ${JOB_ID}`,
		),
	],
	// Transcription: the file URL, language code, translation languages, summary, options.
	['transcribe', /^Give the URL of the file to transcribe\./],
	['transcribe meeting.mp3', new RegExp(`^The URL "meeting\\.mp3" ${URL_RULE}`)],
	[
		'transcribe ftp://files.example/a.mp3',
		new RegExp(`^The URL "ftp://files\\.example/a\\.mp3" ${URL_RULE}`),
	],
	[
		`transcribe ${FILE} https://files.example/b.mp3`,
		/^Give exactly one URL \(one file per transcription\)\./,
	],
	[
		`transcribe ${FILE} --language english`,
		/^--language "english" must be a language code such as "en", "fr" or "pt-BR"\./,
	],
	[`transcribe ${FILE} --language EN`, /^--language "EN" must be a language code/],
	[
		`transcribe ${FILE} --translate klingon`,
		/^--translate "klingon" has unsupported language "klingon"; supported: English, French, German, Italian, Portuguese, Hindi, Spanish, Thai\./,
	],
	[
		`transcribe ${FILE} --translate german,,spanish`,
		/^--translate "German,,Spanish" must be a comma-separated list of languages with no empty entries\./,
	],
	[`transcribe ${FILE} --summary -5`, /^--summary -5 must be 0 \(off\) or a positive word limit\./],
	[`transcribe ${FILE} --summary ten`, /^--summary "ten" must be a whole number of words\./],
	[`transcribe ${FILE} --summary`, /^--summary needs a value\./],
	[`transcribe ${FILE} --summary 10 --summary 20`, /^--summary is given twice\./],
	// Translating the speech itself goes into English only; the command has no option for another target.
	[
		`transcribe ${FILE} --translate-to french`,
		/^Unknown option --translate-to\. Options: --language, --summary, --translate, --word-timestamps\./,
	],
	[`transcribe ${FILE} --word-timestamps=yes`, /^--word-timestamps takes no value\./],
	[
		`transcribe <${FILE}|talk.mp3> --language english`,
		/^--language "english" must be a language code/,
	],
	// Images: width and height 256-2048, seed, count.
	['image', /^Describe the image to generate\./],
	['image --width 512', /^Describe the image to generate\./],
	['image a fox --width 255', /^--width 255 must be 256-2048 pixels\./],
	['image a fox --width 2049', /^--width 2049 must be 256-2048 pixels\./],
	['image a fox --height 0', /^--height 0 must be 256-2048 pixels\./],
	['image a fox --width wide', /^--width "wide" must be a whole number of pixels\./],
	['image a fox --seed -1', /^--seed -1 must be 0 or more\./],
	['image a fox --count 0', /^--count 0 must be a whole number from 1 to 4\./],
	['image a fox --count 5', /^--count 5 must be a whole number from 1 to 4\./],
	[
		'image a fox --steps 0',
		/^Unknown option --steps\. Options: --width, --height, --seed, --count\./,
	],
	// Chat and the command itself.
	['chat', /^Write the message to send\./],
	['chat    ', /^Write the message to send\./],
	['frobnicate now', /^There is no subcommand "frobnicate"\./],
];

let users = 0;

describe('/gpu with invalid input answers privately, naming the option and the rule; nothing is sent', () => {
	const titled = commands.map(([text, problem]): [string, string, RegExp] => [
		text.length > 60 ? `${text.slice(0, 57)}...` : text,
		text,
		problem,
	]);
	test.each(titled)('/gpu %s', async (_title, text, problem) => {
		const user = `U0BAD${++users}`;
		const requests = stack.emulator.requests.length;
		expect((await stack.command(text, user, CHANNEL)).status).toBe(200);
		const answer = await stack.waitForEphemeral(/Usage:/, user);
		expect(answer).toMatch(problem);
		await stack.app.idle();
		expect(stack.standin.workspace.ephemeralsFor(user)).toHaveLength(1);
		expect(stack.parents(CHANNEL)).toHaveLength(0);
		expect(stack.emulator.requests.length).toBe(requests);
	});
});

describe('the job form refuses bad fields under the field; no job is created', () => {
	const endpoint = 'echo';
	function values(
		input: string | null,
		metadata: string | null = null,
		chosen: string | null = endpoint,
	) {
		return {
			[JOB_FORM.endpoint.block]: {
				[JOB_FORM.endpoint.action]: {
					type: 'static_select',
					selected_option: chosen
						? { value: chosen, text: { type: 'plain_text', text: chosen } }
						: null,
				},
			},
			[JOB_FORM.input.block]: {
				[JOB_FORM.input.action]: { type: 'plain_text_input', value: input },
			},
			[JOB_FORM.metadata.block]: {
				[JOB_FORM.metadata.action]: { type: 'plain_text_input', value: metadata },
			},
		};
	}
	const many = (n: number) =>
		JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`key${i}`, i])));

	/** [case, form values, the block whose error shows, what it says]. */
	const submissions: Array<[string, ReturnType<typeof values>, string, RegExp]> = [
		[
			'input that is not valid JSON',
			values('{"prompt": '),
			JOB_FORM.input.block,
			/^The input is not valid JSON/,
		],
		['input left empty', values('   '), JOB_FORM.input.block, /^Enter the job input as JSON\.$/],
		[
			'no endpoint chosen',
			values('{}', null, null),
			JOB_FORM.endpoint.block,
			/^Choose an endpoint\.$/,
		],
		[
			'metadata that is a list',
			values('{}', '[1, 2]'),
			JOB_FORM.metadata.block,
			/^Metadata must be a JSON object/,
		],
		[
			'metadata that is not valid JSON',
			values('{}', '{order: 1}'),
			JOB_FORM.metadata.block,
			/^The metadata is not valid JSON/,
		],
		[
			'metadata with 21 properties',
			values('{}', many(21)),
			JOB_FORM.metadata.block,
			/^Metadata can have at most 12 properties \(the app keeps the rest of the service's 20 for itself\)\.$/,
		],
		[
			'metadata using a key the app reserves',
			values('{}', '{"slack_channel": "C0OTHER"}'),
			JOB_FORM.metadata.block,
			/^Metadata property "slack_channel" is reserved for the app\.$/,
		],
	];

	let viewId: string;
	beforeAll(async () => {
		await stack.command('job', 'U0FORMBAD', CHANNEL);
		const view = await stack.standin.waitFor(
			() =>
				[...stack.standin.workspace.views.values()].find(
					(open) =>
						open.user === 'U0FORMBAD' && JSON.stringify(open.view).includes('static_select'),
				),
			10_000,
			'the job form with the catalogue',
		);
		viewId = view.id;
	});

	test.each(submissions)('%s', async (_name, formValues, block, message) => {
		const creates = stack.serviceCalls('POST', /\/jobs$/);
		const reply = await stack.standin.app.submitView({
			user: 'U0FORMBAD',
			viewId,
			values: formValues,
		});
		expect(reply.status).toBe(200);
		expect(JSON.parse(reply.body)).toEqual({
			response_action: 'errors',
			errors: { [block]: expect.stringMatching(message) },
		});
		await stack.app.idle();
		expect(stack.serviceCalls('POST', /\/jobs$/)).toBe(creates);
		expect(stack.parents(CHANNEL)).toHaveLength(0);
	});
});

describe('the shared client refuses out-of-bound calls before any request', () => {
	const calls: Array<
		[string, (client: ReturnType<typeof createManagementClient>) => Promise<unknown>, RegExp]
	> = [
		[
			'endpoints page 0',
			(client) => client.endpoints.list({ page: 0 }),
			/^page 0 must be between 1 and 2147483647$/,
		],
		[
			'endpoints page_size 0',
			(client) => client.endpoints.list({ page_size: 0 }),
			/^page_size 0 must be between 1 and 100$/,
		],
		[
			'endpoints page_size 101',
			(client) => client.endpoints.list({ page_size: 101 }),
			/^page_size 101 must be between 1 and 100$/,
		],
		[
			'jobs page 2147483648',
			(client) => client.jobs.list('echo', { page: 2 ** 31 }),
			/^page 2147483648 must be between 1 and 2147483647$/,
		],
		[
			'a job id that is not a UUID',
			(client) => client.jobs.get('echo', 'not-a-uuid'),
			/^job id "not-a-uuid" must be a job id/,
		],
		[
			'an endpoint name with capitals',
			(client) => client.jobs.create('Echo', { input: {} }),
			/^endpoint name "Echo" must be 2-63/,
		],
		[
			'a webhook URL of 2049 characters',
			(client) =>
				client.jobs.create('echo', {
					input: {},
					webhook_url: `https://example.com/${'a'.repeat(2029)}`,
				}),
			/^job webhook_url ".+" \(2049 characters\) must be at most 2048 characters$/,
		],
		[
			'metadata with 21 properties',
			(client) =>
				client.jobs.create('echo', {
					input: {},
					metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])),
				}),
			/^job metadata \(an object\) must have at most 20 properties$/,
		],
		[
			'a job without input',
			(client) => client.jobs.create('echo', JSON.parse('{}')),
			/^job input is required$/,
		],
		[
			'a queue name of 64 characters',
			(client) => client.queues.create('default', { name: char64 }),
			/^queue name ".+" \(64 characters\) must be 2-63/,
		],
	];

	test.each(calls)('%s', async (_name, call, message) => {
		const client = createManagementClient({
			baseUrl: stack.emulator.baseUrl,
			organization: stack.emulator.organization,
			apiKey: stack.emulator.apiKey,
		});
		const requests = stack.emulator.requests.length;
		const error: unknown = await call(client).then(
			() => undefined,
			(thrown: unknown) => thrown,
		);
		expect(error).toBeInstanceOf(ValidationError);
		expect(error instanceof Error ? error.message : '').toMatch(message);
		expect(stack.emulator.requests.length).toBe(requests);
	});
});

describe('what only the service can judge', () => {
	test("/gpu job on an endpoint that does not exist: one look-up, the service's 404, and no job is created", async () => {
		const requests = stack.emulator.requests.length;
		await stack.command('job no-such-endpoint {"a": 1}', 'U0BADEND', CHANNEL);
		const answer = await stack.waitForEphemeral(/no endpoint/, 'U0BADEND');
		expect(answer).toMatch(
			/^There is no endpoint "no-such-endpoint" in the catalogue\. `\/gpu endpoints` lists them\./,
		);
		await stack.app.idle();
		const sent = stack.emulator.requests
			.slice(requests)
			.map((request) => [
				request.method,
				request.path.replace(/^.*\/organizations\/[^/]+/, ''),
				request.status,
			]);
		expect(sent).toEqual([['GET', '/inference-endpoints/no-such-endpoint', 404]]);
		expect(stack.parents(CHANNEL)).toHaveLength(0);
	});
});
