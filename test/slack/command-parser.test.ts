import { parseCommand, tokenize } from '../../slack-app/features/command-parser';
import { SUBCOMMANDS, USAGE } from '../../slack-app/messages/help';

function ok(text: string) {
	const result = parseCommand(text);
	if (!result.ok) throw new Error(`expected "${text}" to parse, got: ${result.problem}`);
	return result.command;
}

function problem(text: string) {
	const result = parseCommand(text);
	if (result.ok) throw new Error(`expected "${text}" to be refused`);
	return result;
}

describe('/gpu command parser', () => {
	it('treats no text and "help" as help', () => {
		expect(ok('')).toEqual({ kind: 'help' });
		expect(ok('   ')).toEqual({ kind: 'help' });
		expect(ok('HELP')).toEqual({ kind: 'help' });
	});

	it('names an unknown subcommand', () => {
		expect(problem('deploy everything').problem).toBe('There is no subcommand "deploy".');
	});

	it('has usage with an example or a note on where its arguments come from, for every subcommand', () => {
		for (const name of SUBCOMMANDS) {
			const usage = USAGE[name];
			expect(usage.syntax.startsWith(name)).toBe(true);
			if (usage.example !== undefined) expect(usage.example.startsWith(name)).toBe(true);
			else expect(usage.note).toBeTruthy();
		}
	});

	it('keeps an endpoints search as typed', () => {
		expect(ok('endpoints')).toEqual({ kind: 'endpoints' });
		expect(ok('endpoints  speech to text ')).toEqual({
			kind: 'endpoints',
			search: 'speech to text',
		});
	});

	describe('job', () => {
		it('parses the endpoint and the JSON input, keeping spaces inside strings', () => {
			expect(ok('job my-endpoint {"prompt": "a  b", "n": [1, 2]}')).toEqual({
				kind: 'job',
				endpoint: 'my-endpoint',
				input: { prompt: 'a  b', n: [1, 2] },
			});
		});

		it('opens the form when there is no input, with the endpoint preselected if named', () => {
			expect(ok('job my-endpoint')).toEqual({ kind: 'job-form', endpoint: 'my-endpoint' });
			expect(ok('job')).toEqual({ kind: 'job-form' });
		});

		it('accepts typographic quotes and Slack-escaped characters in JSON', () => {
			expect(ok('job my-endpoint {\u201Cq\u201D: \u201Ca &amp; b &lt;c&gt;\u201D}')).toEqual({
				kind: 'job',
				endpoint: 'my-endpoint',
				input: { q: 'a & b <c>' },
			});
		});

		it('names bad JSON and where it breaks', () => {
			const result = problem('job my-endpoint {prompt: 1}');
			expect(result.subcommand).toBe('job');
			expect(result.problem).toMatch(/^The input is not valid JSON: .*position 1/);
		});

		it('names the endpoint-name rule', () => {
			expect(problem('job My_Endpoint {}').problem).toMatch(
				/^The endpoint name "My_Endpoint" must be 2-63 lower-case letters/,
			);
		});
	});

	describe('transcribe', () => {
		it('maps options to the service input, with canonical language names', () => {
			expect(
				ok(
					'transcribe https://files.example/talk.mp3?sig=1 --language fr --summary 100 --translate german,SPANISH --word-timestamps',
				),
			).toEqual({
				kind: 'transcribe',
				input: {
					url: 'https://files.example/talk.mp3?sig=1',
					language_code: 'fr',
					summarize: 100,
					llm_translation: 'German,Spanish',
					word_level_timestamps: true,
				},
			});
		});

		it('accepts the link form Slack sends and option=value', () => {
			expect(ok('transcribe <https://files.example/a.mp3|a.mp3> --summary=50')).toEqual({
				kind: 'transcribe',
				input: { url: 'https://files.example/a.mp3', summarize: 50 },
			});
		});

		it('names a missing URL, a bad URL, a bad number and an unsupported language with the option names', () => {
			expect(problem('transcribe').problem).toMatch(
				/^Give the URL of the file to transcribe\. For a file shared in Slack, use the message shortcut "Transcribe with GPU Cloud"/,
			);
			expect(problem('transcribe ftp://x/a.mp3').problem).toBe(
				'The URL "ftp://x/a.mp3" must be a full http:// or https:// URL.',
			);
			expect(problem('transcribe https://x.io/a --summary lots').problem).toBe(
				'--summary "lots" must be a whole number of words.',
			);
			expect(problem('transcribe https://x.io/a --translate klingon').problem).toMatch(
				/^--translate "klingon" has unsupported language "klingon"; supported: English, French/,
			);
		});

		it('refuses unknown, repeated and value-less options', () => {
			expect(problem('transcribe https://x.io/a --speed 2').problem).toMatch(
				/^Unknown option --speed\. Options: --language, --summary/,
			);
			expect(problem('transcribe https://x.io/a --summary 1 --summary 2').problem).toBe(
				'--summary is given twice.',
			);
			expect(problem('transcribe https://x.io/a --language').problem).toBe(
				'--language needs a value.',
			);
			expect(problem('transcribe https://x.io/a https://x.io/b').problem).toMatch(
				/exactly one URL/,
			);
		});
	});

	it('checks job ids for status and cancel', () => {
		expect(ok('status 3F2A9C1E-8B4D-4E6F-9A0B-1C2D3E4F5A6B')).toEqual({
			kind: 'status',
			jobId: '3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b',
		});
		expect(ok('cancel 3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b')).toEqual({
			kind: 'cancel',
			jobId: '3f2a9c1e-8b4d-4e6f-9a0b-1c2d3e4f5a6b',
		});
		expect(problem('status 42').problem).toMatch(/^The job id "42" must be a job id/);
		expect(problem('cancel').problem).toBe('Give one job id.');
	});

	describe('queue', () => {
		it('reads multi-word display names and descriptions up to the next option', () => {
			expect(
				ok('queue render-jobs --display-name Render jobs --description For the nightly renders'),
			).toEqual({
				kind: 'queue',
				request: {
					name: 'render-jobs',
					display_name: 'Render jobs',
					description: 'For the nightly renders',
				},
			});
			expect(ok('queue q1 --display-name "Quoted name"')).toEqual({
				kind: 'queue',
				request: { name: 'q1', display_name: 'Quoted name' },
			});
		});

		it('names the queue-name rule and the length limits', () => {
			expect(problem('queue Render_Jobs').problem).toMatch(
				/^The queue name "Render_Jobs" must be 2-63 lower-case letters/,
			);
			expect(problem(`queue ok-name --description ${'x'.repeat(501)}`).problem).toMatch(
				/^--description .* must be at most 500 characters\.$/,
			);
			expect(problem('queue a b').problem).toMatch(/one word/);
		});
	});

	describe('image', () => {
		it('joins the prompt words and reads the numeric options', () => {
			expect(ok('image a red fox in snow --width 512 --height 768 --seed 7 --count 3')).toEqual({
				kind: 'image',
				request: { prompt: 'a red fox in snow', width: 512, height: 768, seed: 7, count: 3 },
			});
			expect(ok('image a red fox')).toEqual({
				kind: 'image',
				request: { prompt: 'a red fox', count: 1 },
			});
		});

		it('names out-of-range sizes and counts', () => {
			expect(problem('image fox --width 100').problem).toBe('--width 100 must be 256-2048 pixels.');
			expect(problem('image fox --count 5').problem).toBe(
				'--count 5 must be a whole number from 1 to 4.',
			);
			expect(problem('image --count 2').problem).toBe('Describe the image to generate.');
		});
	});

	it('keeps a chat message exactly, typographic quotes included', () => {
		expect(ok('chat  What is a \u201Cwarp\u201D?  ')).toEqual({
			kind: 'chat',
			message: 'What is a \u201Cwarp\u201D?',
		});
		expect(problem('chat').problem).toBe('Write the message to send.');
	});

	it('tokenizes quoted words', () => {
		expect(tokenize(`a "b c" 'd e' f`)).toEqual(['a', 'b c', 'd e', 'f']);
	});
});
