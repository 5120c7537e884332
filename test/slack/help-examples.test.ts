import { randomUUID } from 'node:crypto';
import { unescapeText } from '../../slack-app/messages/format';
import { helpMessage } from '../../slack-app/messages/help';
import { content, Stack } from './harness';

/**
 * Every example `/gpu help` shows is typed as shown, through the app, against the embedded
 * emulator: each must do what it says (no usage error, a result in its thread).
 */

let stack: Stack;
beforeAll(async () => {
	stack = await Stack.start({ env: { SLACK_MAX_JOBS_PER_USER: '10' } });
});
afterAll(() => stack.close());

/** The `/gpu …` commands after "e.g." in the help message, as a person would copy them. */
function helpExamples(): string[] {
	const texts = helpMessage('/gpu').blocks.flatMap((block) =>
		block.type === 'section' && block.text ? [block.text.text] : [],
	);
	return texts.flatMap((text) =>
		[...text.matchAll(/_e\.g\._ `\/gpu ([^`]+)`/g)].map((match) => unescapeText(match[1])),
	);
}

let counter = 0;

it('shows an example for the subcommands that can be typed ahead', () => {
	expect(
		helpExamples()
			.map((example) => example.split(' ')[0])
			.sort(),
	).toEqual(['chat', 'endpoints', 'image', 'job', 'queue', 'transcribe']);
});

describe('each help example works as typed', () => {
	it.each(helpExamples())('/gpu %s', async (example) => {
		counter++;
		const channel = `C0HELPEX${counter}`;
		const user = `U0HELPEX${counter}`;
		expect((await stack.command(example, user, channel)).status).toBe(200);
		if (example.startsWith('endpoints')) {
			const list = await stack.waitForEphemeral(/Endpoints matching|Nothing matches/, user);
			expect(list).not.toContain('Nothing matches');
			expect(list).toContain('transcribe');
			return;
		}
		const parent = await stack.waitForParent(1, channel);
		await stack.waitForParentText(parent.ts, /Succeeded in/, 20_000, channel);
		await stack.app.idle();
		expect(stack.ephemeralTexts(user).join('\n')).not.toMatch(/:warning:|:x:/);
		expect(stack.replies(parent.ts, channel).map(content).join('\n')).not.toMatch(/failed|:x:/i);
	});
});

it('/gpu cancel of an unknown job answers with the usage of cancel, not of status', async () => {
	const user = 'U0CANCELUNKNOWN';
	await stack.command(`cancel ${randomUUID()}`, user, 'C0CANCELUNKNOWN');
	const reply = await stack.waitForEphemeral(/No job/, user);
	expect(reply).toContain('/gpu cancel &lt;job id&gt;');
	expect(reply).not.toContain('/gpu status');
});
