import { randomUUID } from 'node:crypto';
import { ACTIONS, SHORTCUTS } from '../../slack-app/messages/actions';
import { ASK_FORM } from '../../slack-app/messages/ask';
import { JOB_FORM } from '../../slack-app/messages/modal';
import { LOCAL_USER } from '../../slack-standin';
import { Stack } from './harness';

/**
 * Home, shortcuts and feedback as Slack's signed requests, including what a tampered
 * client could send: every value is checked before anything is done with it.
 */

let stack: Stack;
beforeAll(async () => {
	stack = await Stack.start();
});
afterAll(() => stack.close());

const CANCELS = /\/jobs\/[^/]+$/;

/** The Home tab Slack shows the person now (views.publish replaces it whole). */
function lastHome(user: string): string {
	return JSON.stringify(stack.standin.workspace.homes.get(user)?.view ?? '');
}

describe('App Home', () => {
	it('shows a person their own requests and slots, and the settings only to admins', async () => {
		await stack.command('job echo {"a": 1}', 'U0HOMER', 'C0HOME');
		const parent = await stack.waitForParent(1, 'C0HOME');
		await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, 'C0HOME');
		await stack.standin.app.appHomeOpened('U0HOMER');
		await stack.standin.waitFor(
			() => lastHome('U0HOMER').includes('ran a job on'),
			10_000,
			'the Home tab',
		);
		const home = lastHome('U0HOMER');
		expect(home).toContain('0* of *3* GPU job slots');
		expect(home).not.toContain('Settings (admins)');
		// Another person's Home does not show it; the local admin sees the settings.
		await stack.standin.app.appHomeOpened(LOCAL_USER.id);
		await stack.standin.waitFor(
			() => lastHome(LOCAL_USER.id).includes('Settings (admins)'),
			10_000,
			'the admin Home tab',
		);
		expect(lastHome(LOCAL_USER.id)).not.toContain('ran a job on');
	});

	it("a forged Cancel (a job not among the person's requests) cancels nothing", async () => {
		await stack.command('job batch-echo {"b": 2}', 'U0OWNER', 'C0HOME2');
		const parent = await stack.waitForParent(1, 'C0HOME2');
		const jobId = await stack.standin.waitFor(
			() =>
				/Job `([0-9a-f-]{36})`/.exec(
					JSON.stringify(stack.standin.workspace.find('C0HOME2', parent.ts)?.blocks),
				)?.[1],
			10_000,
			'the job id',
		);
		const before = stack.serviceCalls('DELETE', CANCELS);
		await stack.standin.app.appHomeOpened('U0MALLORY');
		for (const value of [
			JSON.stringify({ endpoint: 'batch-echo', jobId }),
			JSON.stringify({ endpoint: 'batch-echo', jobId: randomUUID() }),
			'{"endpoint": "../x", "jobId": 1}',
			'not json',
		]) {
			await stack.standin.app.clickInHome({
				user: 'U0MALLORY',
				actionId: ACTIONS.homeCancel,
				value,
			});
		}
		await stack.standin.waitFor(
			() => lastHome('U0MALLORY').includes('no longer in your recent requests'),
			10_000,
			'the notice',
		);
		await stack.app.idle();
		expect(stack.serviceCalls('DELETE', CANCELS)).toBe(before);
		// The owner's own Home Cancel works.
		await stack.standin.app.appHomeOpened('U0OWNER');
		await stack.standin.app.clickInHome({
			user: 'U0OWNER',
			actionId: ACTIONS.homeCancel,
			value: JSON.stringify({ endpoint: 'batch-echo', jobId }),
		});
		await stack.waitForParentText(parent.ts, /Cancelled after/, 15_000, 'C0HOME2');
		expect(stack.serviceCalls('DELETE', CANCELS)).toBe(before + 1);
	});
});

describe('shortcuts', () => {
	it('the job form opened by the global shortcut asks for a channel before anything runs', async () => {
		await stack.standin.app.globalShortcut('U0SHORT', SHORTCUTS.runJob);
		const view = await stack.standin.waitFor(
			() =>
				[...stack.standin.workspace.views.values()].find(
					(open) =>
						open.user === 'U0SHORT' && JSON.stringify(open.view).includes('conversations_select'),
				),
			10_000,
			'the job form',
		);
		const values = {
			[JOB_FORM.channel.block]: {
				[JOB_FORM.channel.action]: { type: 'conversations_select', selected_conversation: null },
			},
			[JOB_FORM.endpoint.block]: {
				[JOB_FORM.endpoint.action]: {
					type: 'static_select',
					selected_option: { value: 'echo', text: { type: 'plain_text', text: 'Echo' } },
				},
			},
			[JOB_FORM.input.block]: {
				[JOB_FORM.input.action]: { type: 'plain_text_input', value: '{}' },
			},
		};
		const before = stack.serviceCalls('POST', /\/jobs$/);
		const reply = await stack.standin.app.submitView({ user: 'U0SHORT', viewId: view.id, values });
		expect(JSON.parse(reply.body)).toEqual({
			response_action: 'errors',
			errors: { [JOB_FORM.channel.block]: 'Choose the channel to post the job in.' },
		});
		expect(stack.serviceCalls('POST', /\/jobs$/)).toBe(before);
	});

	it('a tampered "Ask about this message" form is refused with a field error; nothing is asked', async () => {
		const message = stack.standin.workspace.post({
			channel: 'C0ASKME',
			user: 'U0SOMEONE',
			text: 'Deploy &lt;tonight&gt;?',
		});
		await stack.standin.app.messageShortcut('U0ASKER', SHORTCUTS.askAboutMessage, message);
		const view = await stack.standin.waitFor(
			() => [...stack.standin.workspace.views.values()].find((open) => open.user === 'U0ASKER'),
			10_000,
			'the ask form',
		);
		// Slack's escapes are undone once: the form shows the message as written (escaped again for mrkdwn).
		expect(JSON.stringify(view.view)).toContain('Deploy &lt;tonight&gt;?');
		expect(JSON.stringify(view.view)).not.toContain('&amp;lt;');
		const chatsBefore = stack.serviceCalls('POST', /\/v1\/chat\/completions$/);
		view.view = {
			...view.view,
			private_metadata: JSON.stringify({ channel: 'C0OTHER', message: 'x', extra: true }),
		};
		const values = {
			[ASK_FORM.question.block]: {
				[ASK_FORM.question.action]: { type: 'plain_text_input', value: 'Why?' },
			},
		};
		const reply = await stack.standin.app.submitView({ user: 'U0ASKER', viewId: view.id, values });
		expect(JSON.parse(reply.body).errors[ASK_FORM.question.block]).toMatch(/out of date/);
		await stack.app.idle();
		expect(stack.serviceCalls('POST', /\/v1\/chat\/completions$/)).toBe(chatsBefore);
	});
});

describe('feedback', () => {
	it('takes only 👍 or 👎 as feedback', async () => {
		const answer = stack.standin.workspace.post({
			channel: 'C0FEED',
			user: 'U0GPUBOT',
			botId: 'B0GPUBOT',
			text: 'An answer',
		});
		const logged = () => stack.logger.lines.filter((line) => line.includes('Chat feedback')).length;
		const before = logged();
		await stack.standin.app.click({
			user: 'U0FEED',
			channel: 'C0FEED',
			actionId: ACTIONS.feedback,
			actionType: 'feedback_buttons',
			value: 'excellent <!channel>',
			message: answer,
		});
		await stack.standin.app.click({
			user: 'U0FEED',
			channel: 'C0FEED',
			actionId: ACTIONS.feedback,
			actionType: 'feedback_buttons',
			value: 'bad',
			message: answer,
		});
		await stack.waitForEphemeral(/Thanks for telling us/, 'U0FEED');
		await stack.app.idle();
		expect(logged()).toBe(before + 1);
		expect(stack.logger.lines.join('\n')).not.toContain('excellent');
	});
});
