import { JOB_FORM } from '../../slack-app/messages/modal';
import { content, Stack } from './harness';
import { openForm as openFormAs } from './job-form-support';

/** `/gpu job` without input: the form, its field errors, and a submitted job. */

const CHANNEL = 'C0FORM';

let stack: Stack;
beforeAll(async () => {
	stack = await Stack.start();
});
afterAll(() => stack.close());

function values(endpoint: string | undefined, input: string, metadata?: string) {
	return {
		[JOB_FORM.endpoint.block]: {
			[JOB_FORM.endpoint.action]: {
				type: 'static_select',
				selected_option: endpoint
					? { value: endpoint, text: { type: 'plain_text', text: endpoint } }
					: null,
			},
		},
		[JOB_FORM.input.block]: { [JOB_FORM.input.action]: { type: 'plain_text_input', value: input } },
		[JOB_FORM.metadata.block]: {
			[JOB_FORM.metadata.action]: { type: 'plain_text_input', value: metadata ?? null },
		},
	};
}

const openForm = (user: string, text = 'job') => openFormAs(stack, user, CHANNEL, text);

it('opens with the catalogue as the endpoint picker, preselecting a named endpoint', async () => {
	const endpoint = stack.emulator.genericEndpoint;
	const view = await openForm('U0FORM1', `job ${endpoint}`);
	const text = JSON.stringify(view.view);
	expect(text).toContain('"value":"transcribe"');
	expect(text).toContain(`"initial_option":{"text":{"type":"plain_text","text":`);
	expect(stack.standin.api.callsOf('views.open')).toHaveLength(1);
	expect(stack.standin.api.callsOf('views.update')).toHaveLength(1);
});

it('keeps the form open with a field error for bad JSON or reserved metadata; nothing is created', async () => {
	const view = await openForm('U0FORM2');
	const before = stack.serviceCalls('POST', /\/jobs$/);
	const badJson = await stack.standin.app.submitView({
		user: 'U0FORM2',
		viewId: view.id,
		values: values(stack.emulator.genericEndpoint, '{"prompt": '),
	});
	expect(badJson.status).toBe(200);
	expect(JSON.parse(badJson.body)).toEqual({
		response_action: 'errors',
		errors: { [JOB_FORM.input.block]: expect.stringMatching(/^The input is not valid JSON/) },
	});
	const reserved = await stack.standin.app.submitView({
		user: 'U0FORM2',
		viewId: view.id,
		values: values(stack.emulator.genericEndpoint, '{}', '{"slack_channel": "x"}'),
	});
	expect(JSON.parse(reserved.body).errors[JOB_FORM.metadata.block]).toMatch(/reserved for the app/);
	await stack.app.idle();
	expect(stack.serviceCalls('POST', /\/jobs$/)).toBe(before);
	expect(stack.parents(CHANNEL)).toHaveLength(0);
});

it('runs the job on submit, with the metadata, and posts it like a command', async () => {
	const view = await openForm('U0FORM3');
	const endpoint = stack.emulator.genericEndpoint;
	const reply = await stack.standin.app.submitView({
		user: 'U0FORM3',
		viewId: view.id,
		values: values(endpoint, '{"prompt": "from the form"}', '{"project": "demo"}'),
	});
	expect(reply.status).toBe(200);
	expect(reply.body).toBe('');
	const parent = await stack.waitForParent(1, CHANNEL);
	expect(content(parent)).toContain(`<@U0FORM3> ran a job on \`${endpoint}\``);
	await stack.waitForParentText(parent.ts, /Succeeded in/, 15_000, CHANNEL);
	const created = stack.emulator.requests
		.filter((request) => request.method === 'POST' && request.path.endsWith(`/${endpoint}/jobs`))
		.at(-1);
	const body = JSON.parse(created?.body ?? '{}') as {
		input?: unknown;
		metadata?: Record<string, unknown>;
	};
	expect(body.input).toEqual({ prompt: 'from the form' });
	expect(body.metadata).toMatchObject({
		project: 'demo',
		slack_channel: CHANNEL,
		slack_user: 'U0FORM3',
		slack_kind: 'job',
		slack_thread_ts: parent.ts,
	});
});
