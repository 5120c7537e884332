import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import type { RunningEmulator } from '../../emulator';
import { composeReply } from '../../emulator/chat/reply';
import { z } from 'zod/v4';
import { chatRequestSchema } from '../../shared/schemas';
import { CHROMIUM, chromiumMissing } from '../support/chromium';
import { generateImageNode, type WorkflowJson } from './workflows';

export const EDITOR_WORKFLOW_ID = 'e2eEditor';
export const EDITOR_NODES = {
	job: 'Run Job',
	fields: 'Run Job From Fields',
	image: 'Generate Image',
	chat: 'Chat',
};

/**
 * The workflow the browser opens: a manual start feeding three GPU Cloud nodes the user finishes in
 * the editor (the job's credential and endpoint, the chat's credential); the image node comes with
 * its credential.
 */
export function editorWorkflow(prefix: string): WorkflowJson {
	const start = { name: 'Start', type: 'n8n-nodes-base.manualTrigger', parameters: {} };
	const nodes = [
		start,
		{
			name: EDITOR_NODES.job,
			type: `${prefix}.gpuCloud`,
			parameters: {
				resource: 'job',
				operation: 'create',
				endpoint: { __rl: true, mode: 'list', value: '' },
				input: JSON.stringify({ prompt: 'from the editor' }),
			},
		},
		{
			// Version 2: the job's input as the chosen endpoint's fields.
			name: EDITOR_NODES.fields,
			type: `${prefix}.gpuCloud`,
			typeVersion: 2,
			parameters: {
				resource: 'job',
				operation: 'create',
				endpoint: { __rl: true, mode: 'list', value: '' },
				inputMode: 'fields',
			},
		},
		generateImageNode(prefix, EDITOR_NODES.image),
		{
			name: EDITOR_NODES.chat,
			type: `${prefix}.gpuCloud`,
			parameters: {
				resource: 'chat',
				operation: 'message',
				inputMode: 'prompt',
				prompt: 'What is an interruptible GPU node?',
				options: { maxTokens: 40 },
			},
		},
	];
	return {
		id: EDITOR_WORKFLOW_ID,
		name: 'GPU Cloud in the editor',
		nodes: nodes.map((node, index) => ({
			id: randomUUID(),
			typeVersion: 1,
			position: index === 0 ? [0, 200] : [300, (index - 1) * 200],
			...node,
		})),
		connections: {
			[start.name]: {
				main: [
					[EDITOR_NODES.job, EDITOR_NODES.fields, EDITOR_NODES.image, EDITOR_NODES.chat].map(
						(node) => ({
							node,
							type: 'main',
							index: 0,
						}),
					),
				],
			},
		},
		active: false,
		settings: { executionOrder: 'v1' },
	};
}

export interface EditorContext {
	base: string;
	owner: { email: string; password: string };
	/** The package's node type prefix, e.g. `n8n-nodes-gpu-cloud`. */
	prefix: string;
	/** The GPU Cloud the management credential is created for. */
	management: RunningEmulator;
	/** A GPU Cloud whose workloads require the key, so that a wrong key fails the workload credential's test. */
	workloads: RunningEmulator;
	/** The imported, published GPU Cloud Trigger workflow and its production URL's path. */
	trigger: { workflowId: string; node: string; webhookId: string };
	/** Where the screenshots go (docs/images to refresh the docs' pictures). */
	screenshots: string;
	check: (name: string, body: () => Promise<void>) => Promise<void>;
	/**
	 * Whether this n8n shows a credential's own rule for a 401 in the credential test. 2.8.4 answers
	 * every 401 with its fixed N8N_OWN_401_MESSAGE before any rule is read; 2.41 applies the rules.
	 */
	credentialRulesOn401: boolean;
}

/** What n8n 2.8.4's credential test says for any 401, whatever the credential's rules. */
const N8N_OWN_401_MESSAGE = 'Authorization failed - please check your credentials';

/** Slow machines: the editor's bundle, node types and runs can take this long under load. */
const STEP_TIMEOUT_MS = 60_000;
const VIEWPORT = { width: 1280, height: 800 };

class EditorCheckFailed extends Error {}

function expect(condition: unknown, message: string): asserts condition {
	if (!condition) throw new EditorCheckFailed(message);
}

const canvasNode = (page: Page, name: string): Locator =>
	page.locator(`[data-test-id="canvas-node"][data-node-name="${name}"]`);

/** Opens a node's panel (NDV) on the canvas by double-clicking it. */
async function openNode(page: Page, name: string): Promise<Locator> {
	await canvasNode(page, name).dblclick();
	const ndv = page.getByTestId('ndv');
	await ndv.waitFor();
	return ndv;
}

async function closeNode(page: Page): Promise<void> {
	await page.getByTestId('ndv-close-button').click();
	await page.getByTestId('ndv').waitFor({ state: 'hidden' });
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** How long the node panel may take to show a search's result. */
const SEARCH_WAIT_MS = 15_000;

/**
 * The node panel's search, as a user types it; resolves to the item named exactly `name`. n8n lists
 * GPU Cloud and GPU Cloud Trigger as one item "GPU Cloud" (a trigger whose type is a node's type plus
 * "Trigger" joins that node's item, with the trigger's description), so an item is told by its
 * name and then by the actions it opens, not by its description (2.8.4's results show none).
 */
async function searchNodePanel(page: Page, text: string, name: string): Promise<Locator> {
	const creator = page.getByTestId('node-creator');
	if (!(await creator.isVisible())) await page.getByTestId('node-creator-plus-button').click();
	await creator.waitFor();
	const search = page.getByTestId('node-creator-search-bar');
	await search.fill(text);
	const names = creator.getByTestId('node-creator-item-name');
	const item = creator.getByTestId('item-iterator-item').filter({
		has: page
			.getByTestId('node-creator-item-name')
			.filter({ hasText: new RegExp(`^\\s*${escape(name)}\\s*$`) }),
	});
	// The panel filters a moment after the typing (the list before it is the unfiltered one): wait
	// for the node or for "no results", and only then read what the search shows.
	await item
		.first()
		.or(page.getByTestId('node-creator-no-results'))
		.waitFor({ timeout: SEARCH_WAIT_MS })
		.catch(() => undefined);
	const shown = await names.allInnerTexts();
	expect(
		(await item.count()) > 0,
		`searching the node panel for "${text}" shows ${shown.length ? shown.map((entry) => `"${entry.trim()}"`).join(', ') : 'nothing'}, none named "${name}"`,
	);
	return item.first();
}

/** Clicks a node panel item and waits for its actions list to show `action`. */
async function expectActionListed(page: Page, item: Locator, action: string): Promise<void> {
	await item.click();
	const listed = page.getByTestId('node-creator').getByText(action, { exact: true }).first();
	await listed.waitFor({ timeout: SEARCH_WAIT_MS }).catch(() => undefined);
	expect(await listed.isVisible(), `the item's actions do not list "${action}"`);
}

/** A new credential from a node's credential select, filled and saved (n8n tests it on save). */
async function createCredential(
	page: Page,
	ndv: Locator,
	fields: Record<string, string>,
): Promise<{ modal: Locator; answer: { status: string; message: string } }> {
	// The GPU Cloud API credential comes first: Job > Create also offers the optional object storage
	// one, whose list (hidden) holds a "Create new credential" button too.
	await ndv.getByTestId('node-credentials-select').first().click();
	await page.getByTestId('node-credentials-select-item-new').filter({ visible: true }).click();
	const modal = page.getByTestId('editCredential-modal');
	await modal.waitFor();
	return { modal, answer: await fillAndSave(page, modal, fields) };
}

const testAnswerSchema = z.object({ data: z.object({ status: z.string(), message: z.string() }) });

/** Fills the dialog's fields and saves; n8n then tests the credential: its answer, as the dialog gets it. */
async function fillAndSave(
	page: Page,
	modal: Locator,
	fields: Record<string, string>,
): Promise<{ status: string; message: string }> {
	for (const [name, value] of Object.entries(fields))
		await modal
			.getByTestId(`parameter-input-${name}`)
			.locator('input, textarea')
			.first()
			.fill(value);
	const tested = page.waitForResponse(
		(response) =>
			response.url().includes('/rest/credentials/test') && response.request().method() === 'POST',
	);
	await modal.getByTestId('credential-save-button').click();
	return testAnswerSchema.parse(await (await tested).json()).data;
}

/** The dialog after a failed test: n8n's "Couldn't connect" callout showing the test's message, which must name the field. */
async function expectRefusedNamingField(
	modal: Locator,
	answer: { status: string; message: string },
	field: string,
	rulesApply: boolean,
): Promise<void> {
	expect(answer.status === 'Error', `the test passed with a wrong key: ${answer.message}`);
	await modal
		.getByText(/Couldn.t connect with these settings/)
		.first()
		.waitFor();
	// Some n8n versions fold the message under "More details".
	const more = modal.getByText('More details', { exact: true });
	if (await more.isVisible()) await more.click();
	await modal.getByText(answer.message).first().waitFor();
	if (!rulesApply) {
		expect(
			answer.message === N8N_OWN_401_MESSAGE,
			`with a wrong key this n8n was expected to say its own "${N8N_OWN_401_MESSAGE}", but says "${answer.message}"`,
		);
		return;
	}
	expect(
		answer.message.includes(field),
		`with a wrong key the dialog says "${answer.message}", which does not name the ${field} field`,
	);
}

/**
 * The dialog after a passed test: "Connection tested successfully" (n8n 2.8), or the dialog closed by
 * itself once the credential was saved and tested (n8n 2.41).
 */
async function expectTestedSuccessfully(modal: Locator): Promise<void> {
	const success = modal.getByTestId('credentials-config-container-test-success');
	await Promise.any([success.waitFor(), modal.waitFor({ state: 'hidden' })]);
	if (await modal.isVisible()) {
		const text = await success.innerText();
		expect(text.includes('Connection tested successfully'), `the dialog says "${text}"`);
		await modal.locator('.el-dialog__close').first().click();
		await modal.waitFor({ state: 'hidden' });
	}
}

/** Execute step in an open node panel, resolved once the run has ended and the output shows it. */
async function executeStep(ndv: Locator): Promise<Locator> {
	await ndv.getByTestId('node-execute-button').click();
	const output = ndv.getByTestId('output-panel');
	await output
		.getByTestId('node-run-status-success')
		.or(output.getByTestId('node-error-message'))
		.first()
		.waitFor();
	const failed = await output.getByTestId('node-error-message').count();
	if (failed) throw new EditorCheckFailed(`Execute step failed: ${await output.innerText()}`);
	return output;
}

/** The name n8n gives the GPU Cloud API credential made in the dialog. */
const MADE_CREDENTIAL = 'GPU Cloud account';

/**
 * A node panel opened on a node without a credential: n8n preselects one of those it has (2.8.4 may
 * take another imported one), so the one made in the dialog is chosen.
 */
async function useMadeCredential(page: Page, ndv: Locator): Promise<void> {
	const select = ndv.getByTestId('node-credentials-select').first();
	const chosen = await select.locator('input').first().inputValue();
	if (chosen === MADE_CREDENTIAL) return;
	await select.click();
	await page
		.locator('[data-test-id^="node-credentials-select-item-"]')
		// Some versions show more than the name in an item (its owner).
		.filter({ hasText: MADE_CREDENTIAL })
		.first()
		.click();
}

/** Inference Endpoint From list: the endpoint whose list item ends with `(name)`. */
async function pickEndpoint(page: Page, ndv: Locator, name: string): Promise<void> {
	await ndv.getByTestId('resource-locator-endpoint').getByTestId('rlc-input').click();
	const items = page.getByTestId('rlc-item');
	await items.first().waitFor();
	await items
		.filter({ hasText: `(${name})` })
		.first()
		.click();
}

async function shot(locator: Locator | Page, dir: string, name: string): Promise<void> {
	await locator.screenshot({ path: join(dir, name) });
}

/**
 * What a user does in n8n's editor, in Debian's Chromium: signs in, finds the nodes by searching the
 * node panel, creates and tests both credentials (a wrong key, then the right one), picks an
 * endpoint From list, runs Execute step for a job, an image (its preview shown) and a chat, and
 * sees the trigger's webhook URLs. Selectors are the data-test-id attributes n8n's own tests use.
 */
export async function editorChecks(ctx: EditorContext): Promise<void> {
	const { check } = ctx;
	if (chromiumMissing) {
		await check('editor: Chromium drives n8n', () =>
			Promise.reject(new Error(`the editor checks need ${chromiumMissing}`)),
		);
		return;
	}
	await mkdir(ctx.screenshots, { recursive: true });
	const { chromium, selectors } = await import('playwright-core');
	selectors.setTestIdAttribute('data-test-id');
	const browser = await chromium.launch({
		executablePath: CHROMIUM,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
	});
	try {
		const context = await browser.newContext({ viewport: VIEWPORT });
		context.setDefaultTimeout(STEP_TIMEOUT_MS);
		const signedIn = await signIn(ctx, context);
		if (!signedIn) return;
		await nodePanelChecks(ctx, await context.newPage());
		await triggerUrlCheck(ctx, await context.newPage());
		await workflowChecks(ctx, await context.newPage());
	} finally {
		await browser.close();
	}
}

async function signIn(ctx: EditorContext, context: BrowserContext): Promise<boolean> {
	let ok = false;
	await ctx.check('editor: the owner signs in', async () => {
		const page = await context.newPage();
		await page.goto(`${ctx.base}/signin`, { waitUntil: 'domcontentloaded' });
		await page.getByTestId('emailOrLdapLoginId').locator('input').fill(ctx.owner.email);
		await page.getByTestId('password').locator('input').fill(ctx.owner.password);
		await page.getByTestId('form-submit-button').click();
		await page.waitForURL((url) => !url.pathname.startsWith('/signin'));
		await page.close();
		ok = true;
	});
	return ok;
}

async function nodePanelChecks(ctx: EditorContext, page: Page): Promise<void> {
	await page.goto(`${ctx.base}/workflow/new`, { waitUntil: 'domcontentloaded' });
	await ctx.check(
		'editor: searching "GPU Cloud Trigger" at "Add first step" lists GPU Cloud, whose triggers include "On job succeeded"',
		async () => {
			const item = await searchNodePanel(page, 'GPU Cloud Trigger', 'GPU Cloud');
			await expectActionListed(page, item, 'On job succeeded');
		},
	);
	// The editor's workflow starts with a manual trigger, so the panel opens at "What happens next?".
	await page.goto(`${ctx.base}/workflow/${EDITOR_WORKFLOW_ID}`, { waitUntil: 'domcontentloaded' });
	await ctx.check(
		'editor: searching "GPU Cloud" at "What happens next?" lists the GPU Cloud node, whose actions include "Generate an image"',
		async () => {
			const item = await searchNodePanel(page, 'GPU Cloud', 'GPU Cloud');
			await shot(page, ctx.screenshots, 'n8n-node-search.png');
			await expectActionListed(page, item, 'Generate an image');
		},
	);
	await page.close();
}

/**
 * The trigger panel's "Webhook URLs": the test URL and, switched to it, the production URL, each
 * `<n8n>/webhook-test/<id>/job-events` and `<n8n>/webhook/<id>/job-events` (any id when none given).
 */
async function expectWebhookUrls(ndv: Locator, base: string, webhookId?: string): Promise<void> {
	await ndv.getByText('Webhook URLs', { exact: true }).first().click();
	const id = webhookId ? escape(webhookId) : '[0-9a-f-]{36}';
	for (const [kind, route] of [
		['Test URL', 'webhook-test'],
		['Production URL', 'webhook'],
	]) {
		await ndv.getByText(kind, { exact: true }).first().click();
		const url = new RegExp(`${escape(base)}/${route}/${id}/job-events`);
		const shown = ndv.getByText(url).first();
		try {
			await shown.waitFor({ timeout: 15_000 });
		} catch {
			throw new EditorCheckFailed(
				`the trigger's panel shows no ${kind} like ${url.source}: ${(await ndv.innerText()).replace(/\s+/g, ' ').slice(0, 400)}`,
			);
		}
	}
}

async function triggerUrlCheck(ctx: EditorContext, page: Page): Promise<void> {
	await ctx.check(
		"editor: the published GPU Cloud Trigger's panel shows its test and production URLs",
		async () => {
			await page.goto(`${ctx.base}/workflow/${ctx.trigger.workflowId}`, {
				waitUntil: 'domcontentloaded',
			});
			const ndv = await openNode(page, ctx.trigger.node);
			await expectWebhookUrls(ndv, ctx.base, ctx.trigger.webhookId);
			await shot(ndv, ctx.screenshots, 'n8n-trigger-urls.png');
			await closeNode(page);
		},
	);
	await page.close();
}

/** The imported editor workflow: both credentials made in the dialog, the endpoint list, three runs. */
async function workflowChecks(ctx: EditorContext, page: Page): Promise<void> {
	const { check, management, workloads } = ctx;
	await page.goto(`${ctx.base}/workflow/${EDITOR_WORKFLOW_ID}`, { waitUntil: 'domcontentloaded' });
	let modal: Locator | undefined;
	let ndv: Locator | undefined;
	await check(
		'editor: GPU Cloud API credential made in the dialog: a wrong API key fails the test, naming the API Key field where n8n reads the credential rules (2.41; 2.8.4 says its own sentence)',
		async () => {
			ndv = await openNode(page, EDITOR_NODES.job);
			const created = await createCredential(page, ndv, {
				apiKey: 'not-the-key',
				baseUrl: management.baseUrl,
				organizationName: management.organization,
			});
			modal = created.modal;
			await expectRefusedNamingField(modal, created.answer, 'API Key', ctx.credentialRulesOn401);
			await shot(modal, ctx.screenshots, 'n8n-credential-wrong-key.png');
		},
	);
	await check(
		'editor: GPU Cloud API credential: the right key passes the test (Connection tested successfully)',
		async () => {
			expect(modal, 'the credential dialog did not open');
			const answer = await fillAndSave(page, modal, { apiKey: management.apiKey });
			expect(answer.status === 'OK', `the right key: ${answer.status} ${answer.message}`);
			await expectTestedSuccessfully(modal);
		},
	);
	await check(
		"editor: Inference Endpoint From list shows GPU Cloud's endpoints; Echo picked, Execute step creates the job",
		async () => {
			expect(ndv, 'the node panel did not open');
			const locator = ndv.getByTestId('resource-locator-endpoint');
			await locator.getByTestId('rlc-input').click();
			const items = page.getByTestId('rlc-item');
			await items.first().waitFor();
			const names = (await items.allInnerTexts()).map((text) => text.trim());
			for (const endpoint of ['transcribe', 'echo'])
				expect(
					names.some((name) => name.endsWith(`(${endpoint})`)),
					`the list shows ${names.join(', ')}: no ${endpoint}`,
				);
			await shot(page, ctx.screenshots, 'n8n-endpoint-list.png');
			await items.filter({ hasText: '(echo)' }).first().click();
			const output = await executeStep(ndv);
			const created = management.requests.filter(
				(request) =>
					request.method === 'POST' &&
					request.path.endsWith('/inference-endpoints/echo/jobs') &&
					request.body?.includes('from the editor'),
			);
			expect(
				created.length === 1 && created[0].status === 201,
				`GPU Cloud received ${created.length} job creations on echo: ${JSON.stringify(created.map((request) => request.status))}`,
			);
			const job = management.jobsOf(management.organization).at(-1);
			expect(job, 'no job on GPU Cloud');
			await output.getByText(job.id).first().waitFor();
			await closeNode(page);
		},
	);
	await check(
		'editor: Job > Create (version 2): the endpoint picked From list shows its fields (a required mark, a choice list); filled, Execute step creates the job with them as its input; another endpoint changes the fields; Using JSON and back',
		async () => {
			const fieldsNdv = await openNode(page, EDITOR_NODES.fields);
			try {
				await useMadeCredential(page, fieldsNdv);
				await pickEndpoint(page, fieldsNdv, 'product-listing');
				const mapping = fieldsNdv.getByTestId('mapping-fields-container');
				const field = (id: string) =>
					mapping.getByTestId(new RegExp(`^parameter-input-(value\\.)?${id}$`)).first();
				await field('product_name').waitFor();
				for (const label of ['Product name', 'Category', 'Tone', 'Max words'])
					await mapping.getByText(label, { exact: true }).first().waitFor();
				await field('product_name').locator('input, textarea').first().fill('Trail shoe');
				await field('category').click();
				const sports = page.getByRole('option', { name: 'sports', exact: true }).first();
				await sports.click();
				// The picture is taken once the choice list has closed (it fades out first).
				await page.waitForFunction(
					`[...document.querySelectorAll('.el-select-dropdown__item')].every((item) => item.offsetParent === null)`,
				);
				await shot(page, ctx.screenshots, 'n8n-endpoint-fields.png');
				await executeStep(fieldsNdv);
				const job = management
					.jobsOf(management.organization)
					.filter((entry) => entry.inference_endpoint_name === 'product-listing')
					.at(-1);
				const input = z
					.object({ product_name: z.string(), category: z.string() })
					.safeParse(job?.input);
				expect(
					input.success &&
						input.data.product_name === 'Trail shoe' &&
						input.data.category === 'sports',
					`the job's input is ${JSON.stringify(job?.input)}`,
				);
				await pickEndpoint(page, fieldsNdv, 'voice-over');
				await mapping.getByText('Script', { exact: true }).first().waitFor();
				expect(
					(await mapping.getByText('Product name', { exact: true }).count()) === 0,
					'the fields of product-listing stayed after voice-over was picked',
				);
				const mode = fieldsNdv.getByTestId('parameter-input-inputMode');
				await mode.click();
				// Options with a description are named by both: the name starts the option.
				await page
					.getByRole('option', { name: /^Using JSON/ })
					.first()
					.click();
				await fieldsNdv.getByTestId('parameter-input-input').waitFor();
				await mode.click();
				await page
					.getByRole('option', { name: /^Using Fields Below/ })
					.first()
					.click();
				await mapping.getByText('Script', { exact: true }).first().waitFor();
			} finally {
				// Closed even after a failed step, so the next checks find the canvas.
				if (await page.getByTestId('ndv').isVisible()) await closeNode(page);
			}
		},
	);
	await check('editor: Image > Generate: Execute step shows the generated image', async () => {
		const imageNdv = await openNode(page, EDITOR_NODES.image);
		const output = await executeStep(imageNdv);
		await output.getByTestId('ndv-view-binary-data').first().click();
		const image = page.locator('img[src*="/rest/binary-data"]').first();
		await image.waitFor();
		// Shown means decoded: the browser has the picture's pixels, not a broken-image icon.
		await page.waitForFunction(
			`(() => { const img = document.querySelector('img[src*="/rest/binary-data"]'); return !!img && img.complete && img.naturalWidth > 0; })()`,
		);
		await shot(page, ctx.screenshots, 'n8n-image-preview.png');
		await page.keyboard.press('Escape');
		if (await page.getByTestId('ndv').isVisible()) await closeNode(page);
	});
	let chatModal: Locator | undefined;
	let chatNdv: Locator | undefined;
	await check(
		'editor: GPU Cloud Workload API credential made in the dialog: a wrong API key fails the test, naming the API Key field where n8n reads the credential rules (2.41; 2.8.4 says its own sentence)',
		async () => {
			chatNdv = await openNode(page, EDITOR_NODES.chat);
			const created = await createCredential(page, chatNdv, {
				serviceUrl: workloads.chatUrl,
				apiKey: 'not-the-key',
			});
			chatModal = created.modal;
			await expectRefusedNamingField(
				chatModal,
				created.answer,
				'API Key',
				ctx.credentialRulesOn401,
			);
		},
	);
	await check(
		'editor: GPU Cloud Workload API credential: the right key passes the test',
		async () => {
			expect(chatModal, 'the credential dialog did not open');
			const answer = await fillAndSave(page, chatModal, { apiKey: workloads.apiKey });
			expect(answer.status === 'OK', `the right key: ${answer.status} ${answer.message}`);
			await expectTestedSuccessfully(chatModal);
		},
	);
	await check("editor: Chat > Message: Execute step shows the model's reply", async () => {
		expect(chatNdv, 'the node panel did not open');
		workloads.resetLogs();
		const output = await executeStep(chatNdv);
		const asked = workloads.requests.filter(
			(request) => request.method === 'POST' && request.path.endsWith('/v1/chat/completions'),
		);
		expect(
			asked.length === 1 && asked[0].status === 200,
			`the workload answered ${JSON.stringify(asked.map((request) => request.status))}`,
		);
		const request = chatRequestSchema.parse(JSON.parse(asked[0].body ?? 'null'));
		const reply = composeReply(request.messages);
		// The output panel shows the reply (its first words; long values wrap).
		await output.getByText(reply.slice(0, 30)).first().waitFor();
	});
	await page.close();
}
