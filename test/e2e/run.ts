/**
 * End to end in a real n8n: the full n8n app (not only n8n-core) loads the packed
 * n8n-nodes-gpu-cloud package the way a user's n8n installs it, runs workflows with `n8n execute`
 * and, as a server (`n8n start`), runs the trigger on a signed webhook, resumes a paused execution
 * when GPU Cloud reports the job's end, serves the editor's view of the nodes, and runs the
 * docs/workflows examples. GPU Cloud is the local emulator; all traffic stays on 127.0.0.1.
 * See docs/e2e.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod/v4';
import { startEmulator, type RunningEmulator } from '../../emulator';
import { signWebhook } from '../../shared/webhooks';
import { importable, loadExamples, ourNodeNames, unknownNodes, type Example } from './examples';
import { ensureN8n, cleanEnv, N8N_VERSION } from './install';
import { N8n, type Execution } from './n8n';
import { runOrThrow, type Service } from './processes';
import { Receiver } from './receiver';
import { N8nRest, type ExecutionSummary } from './rest';
import * as workflows from './workflows';

const REPO = resolve(__dirname, '..', '..');
/** Long enough for n8n to save a paused execution before the job ends; short enough to keep the run quick. */
const JOB_DURATION_MS = 2_500;
const WAIT_FOR_REPORT_MS = 60_000;
const HTTP_TIMEOUT_MS = 60_000;
const WHOLE_RUN_TIMEOUT_MS = 25 * 60_000;
const KEEP = process.env.E2E_KEEP === '1';
const PKG = workflows.PACKAGE_PREFIX;

type Outcome = 'pass' | 'fail' | 'not run';
const checks: Array<{ name: string; outcome: Outcome }> = [];
const runStarted = Date.now();

function log(line: string): void {
  const seconds = ((Date.now() - runStarted) / 1000).toFixed(1).padStart(6);
  process.stdout.write(`[${seconds}s] ${line}\n`);
}

class CheckFailed extends Error {}

function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailed(message);
}

async function check(name: string, body: () => Promise<void>): Promise<void> {
  const started = Date.now();
  try {
    await body();
    checks.push({ name, outcome: 'pass' });
    log(`PASS ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    checks.push({ name, outcome: 'fail' });
    log(`FAIL ${name}\n       ${message.split('\n').join('\n       ')}`);
  }
}

function notRun(name: string, why: string): void {
  checks.push({ name, outcome: 'not run' });
  log(`NOT RUN ${name}: ${why}`);
}

/** A value in a failure message, shortened. */
function preview(value: unknown): string {
  return (JSON.stringify(value) ?? String(value)).slice(0, 300);
}

/** A node's output items, or a failure that says what n8n reported instead. */
function outputOf(execution: Execution, node: string): Array<Record<string, unknown>> {
  const nodeError = execution.nodeErrors.get(node);
  expect(execution.status === 'success', `execution ${execution.status}: ${nodeError ?? execution.error ?? 'no error given'}`);
  const items = execution.outputs.get(node);
  expect(items, `node "${node}" did not run (ran: ${[...execution.outputs.keys()].join(', ')})`);
  return items;
}

/** Every GPU Cloud node of an example output items, none of them a failed job. */
function expectOurNodesSucceeded(example: Example, execution: Execution): void {
  for (const node of ourNodeNames(example)) {
    const items = outputOf(execution, node);
    expect(items.length > 0, `"${node}" output nothing`);
    const failed = items.find((item) => item.status === 'failed' || item.status === 'cancelled' || typeof item.error === 'string');
    expect(!failed, `"${node}" output a failed job: ${preview(failed)}`);
  }
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const STORED_FILE = 'filesystem-v2:';
const reportSchema = z.object({ executionId: z.string(), item: z.record(z.string(), z.unknown()) });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An execution as n8n's executions list shows it once it has ended (a report or reply can arrive
 * a moment before n8n records the end; a paused execution is `waiting`).
 */
async function endedExecution(rest: N8nRest, workflowId: string, executionId?: string): Promise<ExecutionSummary> {
  const deadline = Date.now() + WAIT_FOR_REPORT_MS;
  for (;;) {
    const executions = await rest.executions(workflowId);
    const execution = executionId ? executions.find((entry) => entry.id === executionId) : executions[0];
    if (execution && !['new', 'running', 'waiting'].includes(execution.status)) return execution;
    if (Date.now() > deadline) throw new CheckFailed(`execution ${executionId ?? 'of ' + workflowId} still ${execution?.status ?? 'missing'} in n8n's list`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Builds the package and unpacks the tarball npm would publish: what a user's n8n installs. */
async function packPackage(work: string): Promise<string> {
  const env = cleanEnv();
  const build = await runOrThrow('npm', ['run', 'build'], { cwd: REPO, env, timeoutMs: 300_000, logFile: join(work, 'build.log') });
  log(`built the package (${(build.durationMs / 1000).toFixed(1)} s)`);
  const packDir = join(work, 'pack');
  await mkdir(packDir, { recursive: true });
  await runOrThrow('npm', ['pack', '--pack-destination', packDir, '--loglevel=error'], { cwd: REPO, env, timeoutMs: 120_000 });
  const tarball = (await readdir(packDir)).find((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack wrote no tarball');
  await runOrThrow('tar', ['-xzf', join(packDir, tarball), '-C', packDir], { timeoutMs: 60_000 });
  log(`packed ${tarball}`);
  return join(packDir, 'package');
}

/** Checks with `n8n execute`: each run is a whole n8n process that loads the package anew. */
async function cliChecks(n8n: N8n, marker: string, customDir: string, examples: Example[]): Promise<void> {
  await check('n8n execute: Job > Create starts a job on the emulator', async () => {
    const execution = await n8n.execute(workflows.IDS.createJob);
    const [job, ...rest] = outputOf(execution, 'Create Job');
    expect(job && rest.length === 0, `expected one item, got ${rest.length + (job ? 1 : 0)}`);
    expect(typeof job.id === 'string' && UUID.test(job.id), `no job id in ${JSON.stringify(job)}`);
    expect(job.inference_endpoint_name === 'transcribe', `endpoint ${String(job.inference_endpoint_name)}`);
    expect(job.status === 'pending' || job.status === 'running', `status ${String(job.status)}`);
    const metadata = z.object({ e2e: z.string() }).safeParse(job.metadata);
    expect(metadata.success && metadata.data.e2e === marker, `metadata not kept: ${JSON.stringify(job.metadata)}`);
  });

  await check('n8n execute: Inference Endpoint > Get Many lists the catalogue', async () => {
    const execution = await n8n.execute(workflows.IDS.listEndpoints);
    const endpoints = outputOf(execution, 'List Endpoints');
    expect(endpoints.some((endpoint) => endpoint.name === 'transcribe'), `no "transcribe" among ${endpoints.map((e) => String(e.name)).join(', ')}`);
  });

  await check('n8n execute: Transcription > Transcribe (poll) waits for the transcript', async () => {
    const execution = await n8n.execute(workflows.IDS.transcribePoll);
    const [result] = outputOf(execution, 'Transcribe');
    expect(result, 'no item');
    expect(result.status === 'succeeded', `status ${String(result.status)}: ${preview(result)}`);
    expect(typeof result.text === 'string' && result.text.length > 0, 'no transcript text');
    expect(typeof result.summary === 'string' && result.summary.length > 0, 'no summary although one was asked for');
  });

  await check('n8n execute: Image > Generate outputs a PNG file, Chat > Message a streamed reply', async () => {
    const execution = await n8n.execute(workflows.IDS.workloads);
    outputOf(execution, 'Generate Image');
    const files = execution.binaries.get('Generate Image') ?? [];
    expect(files.length > 0, 'no image item');
    const image = files[0].data;
    expect(image?.mimeType === 'image/png', `the item has no PNG file in "data": ${JSON.stringify(files[0])}`);
    expect(image.fileName?.endsWith('.png'), `file name missing: ${JSON.stringify(image)}`);
    // n8n keeps the bytes in its binary data store (the file system by default), not in the run data.
    const stored = image.id?.startsWith(STORED_FILE) ? join(n8n.userFolder, '.n8n', 'storage', image.id.slice(STORED_FILE.length)) : undefined;
    expect(stored, `the file is not in n8n's file-system store: ${JSON.stringify(image)}`);
    const bytes = await readFile(stored);
    expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE), `the stored file is not a PNG (${bytes.length} bytes)`);
    const [reply] = outputOf(execution, 'Chat');
    expect(typeof reply?.reply === 'string' && reply.reply.length > 0, `no reply: ${JSON.stringify(reply)}`);
    expect(typeof reply.finishReason === 'string', `no finish reason: ${JSON.stringify(reply)}`);
  });

  await check('n8n execute: loaded from N8N_CUSTOM_EXTENSIONS as CUSTOM.gpuCloud', async () => {
    const execution = await n8n.execute(workflows.IDS.customList, {
      N8N_CUSTOM_EXTENSIONS: customDir,
      // Only the custom-extension copy: the community package would provide the credential type too.
      N8N_COMMUNITY_PACKAGES_PREVENT_LOADING: 'true',
    });
    const endpoints = outputOf(execution, 'List Endpoints');
    expect(endpoints.some((endpoint) => endpoint.name === 'transcribe'), 'no "transcribe" endpoint');
  });

  for (const example of examples.filter((entry) => entry.start.kind === 'manual')) {
    await check(`n8n execute: docs/workflows/${example.file} runs${disabledNote(example)}`, async () => {
      expectOurNodesSucceeded(example, await n8n.execute(example.id));
    });
  }
}

function disabledNote(example: Example): string {
  return example.disabled.length > 0 ? ` (disabled: ${example.disabled.join(', ')})` : '';
}

/** Checks against the running server: the editor's API, webhooks, paused executions, examples. */
async function serverChecks(base: string, rest: N8nRest, emulator: RunningEmulator, receiver: Receiver, marker: string, examples: Example[]): Promise<void> {
  await check('n8n start: the editor offers the nodes, the AI tool variant, both credentials and their icons', async () => {
    const nodeTypes = await rest.nodeTypes();
    const credentialTypes = await rest.credentialTypes();
    const icons: string[] = [];
    for (const name of ['gpuCloud', 'gpuCloudTrigger', 'gpuCloudTool']) {
      const type = nodeTypes.find((entry) => entry.name === `${PKG}.${name}`);
      expect(type, `n8n does not list ${PKG}.${name}`);
      expect(typeof type.iconUrl === 'object', `${name} has no light and dark icon: ${JSON.stringify(type.iconUrl)}`);
      icons.push(type.iconUrl.light, type.iconUrl.dark);
      if (name !== 'gpuCloudTool') expect(type.codex?.categories?.length, `${name} has no codex categories (is its .node.json in dist?)`);
    }
    for (const name of ['gpuCloudApi', 'gpuCloudWorkloadApi']) {
      const type = credentialTypes.find((entry) => entry.name === name);
      expect(type, `n8n does not list the credential type ${name}`);
      expect(typeof type.iconUrl === 'object', `${name} has no light and dark icon`);
      icons.push(type.iconUrl.light, type.iconUrl.dark);
    }
    for (const icon of new Set(icons)) {
      const response = await fetch(`${base}/${icon}`, { signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
      const body = await response.text();
      expect(response.status === 200 && body.includes('<svg'), `icon ${icon}: HTTP ${response.status}`);
    }
  });

  await check('n8n start: the credential Test button accepts the key and rejects a wrong one', async () => {
    const credential = { ...workflows.CREDENTIALS.management, type: 'gpuCloudApi' };
    const data = { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, organizationName: emulator.organization };
    const good = await rest.testCredential({ ...credential, data });
    expect(good.status === 'OK', `with the right key: ${good.status} ${good.message}`);
    const bad = await rest.testCredential({ ...credential, data: { ...data, apiKey: 'not-the-key' } });
    expect(bad.status === 'Error', `with a wrong key: ${bad.status} ${bad.message}`);
  });

  await check('n8n start: the Inference Endpoint list (resource locator) is filled from GPU Cloud', async () => {
    const results = await rest.resourceLocatorResults({
      path: 'parameters.endpoint',
      methodName: 'searchEndpoints',
      nodeTypeAndVersion: { name: `${PKG}.gpuCloud`, version: 1 },
      currentNodeParameters: { resource: 'job', operation: 'create', endpoint: { __rl: true, mode: 'list', value: '' } },
      credentials: { gpuCloudApi: workflows.CREDENTIALS.management },
      filter: 'trans',
    });
    expect(results.some((entry) => entry.value === 'transcribe'), `got ${preview(results)}`);
  });

  await check('n8n start: GPU Cloud Trigger runs its workflow on the signed job webhook', async () => {
    const response = await fetch(`${emulator.baseUrl}/organizations/${emulator.organization}/inference-endpoints/transcribe/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Service-Api-Key': emulator.apiKey },
      body: JSON.stringify({
        input: { url: 'https://files.example/e2e-trigger.mp3?signature=e2e' },
        metadata: { e2e: marker },
        webhook_url: `${base}${workflows.TRIGGER_PATH}`,
      }),
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
    expect(response.status === 201, `creating the job on the emulator: HTTP ${response.status}`);
    const job = z.object({ id: z.string() }).parse(await response.json());
    const arrived = await receiver.waitFor('/trigger', (body) => reportSchema.safeParse(body).data?.item.id === job.id, WAIT_FOR_REPORT_MS);
    const { item, executionId } = reportSchema.parse(arrived.body);
    expect(item.status === 'succeeded', `status ${String(item.status)}`);
    expect(item.endpoint === 'transcribe', `endpoint ${String(item.endpoint)}`);
    expect(z.object({ e2e: z.literal(marker) }).safeParse(item.metadata).success, `metadata ${JSON.stringify(item.metadata)}`);
    expect(typeof item.webhookId === 'string' && item.webhookId.length > 0, 'no webhook-id: the signature was not checked');
    const execution = await endedExecution(rest, workflows.IDS.trigger, executionId);
    expect(execution.status === 'success' && execution.mode === 'webhook', `n8n lists the execution as ${JSON.stringify(execution)}`);
  });

  const forgedJobId = randomUUID();
  await check('n8n start: GPU Cloud Trigger refuses a delivery signed with the wrong secret (401)', async () => {
    const now = new Date().toISOString();
    const payload = JSON.stringify({
      type: 'inference_endpoint.job.succeeded',
      timestamp: now,
      data: {
        id: forgedJobId,
        inference_endpoint_name: 'transcribe',
        organization_name: emulator.organization,
        input: { url: 'https://files.example/forged.mp3' },
        status: 'succeeded',
        events: [{ action: 'created', time: now }],
        create_time: now,
        update_time: now,
        output: { text: 'forged' },
      },
    });
    const forged = signWebhook(Buffer.from('not the organization secret').toString('base64'), payload, { timestampSeconds: Date.now() / 1000 });
    const response = await fetch(`${base}${workflows.TRIGGER_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...forged.headers },
      body: forged.body,
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
    expect(response.status === 401, `expected 401, got ${response.status}: ${(await response.text()).slice(0, 200)}`);
  });

  await check('n8n start: Transcribe (webhook wait) parks the execution and resumes on the callback', async () => {
    const started = await fetch(`${base}${workflows.RESUME_START_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://files.example/e2e-resume.mp3?signature=e2e', marker: randomUUID() }),
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
    expect(started.status === 200, `starting the workflow: HTTP ${started.status}: ${(await started.text()).slice(0, 200)}`);
    const arrived = await receiver.waitFor('/resumed', (body) => reportSchema.safeParse(body).success, WAIT_FOR_REPORT_MS);
    const { item, executionId } = reportSchema.parse(arrived.body);
    expect(item.status === 'succeeded', `status ${String(item.status)}: ${preview(item)}`);
    expect(item.waitTimedOut === undefined, 'the wait timed out instead of being resumed');
    expect(typeof item.text === 'string' && item.text.length > 0, 'no transcript text');
    const jobId = String(item.jobId);
    // Taken (2xx) only while the execution waited: a finished one answers 409.
    const resumedBy = emulator.deliveries.filter((delivery) => delivery.jobId === jobId && delivery.url.includes('/webhook-waiting/'));
    expect(resumedBy.some((delivery) => delivery.ok), `the emulator's call of the resume URL was not taken: ${JSON.stringify(resumedBy)}`);
    const execution = await endedExecution(rest, workflows.IDS.resume, executionId);
    expect(execution.status === 'success', `n8n lists the execution as ${JSON.stringify(execution)}`);
  });

  await check('n8n start: the forged delivery started nothing', async () => {
    const forgedRuns = receiver.all('/trigger').filter((entry) => reportSchema.safeParse(entry.body).data?.item.id === forgedJobId);
    expect(forgedRuns.length === 0, 'the trigger ran its workflow for a forged delivery');
  });

  if (examples.length === 0) {
    log('no docs/workflows/*.json yet: no examples to check');
    return;
  }
  await check('n8n start: every docs/workflows example uses node types and versions this n8n offers', async () => {
    const offered = await rest.nodeTypes();
    const problems = examples.flatMap((example) => unknownNodes(example, offered).map((problem) => `${example.file}: ${problem}`));
    expect(problems.length === 0, problems.join('\n'));
  });

  for (const example of examples) {
    const { start } = example;
    const name = `n8n start: docs/workflows/${example.file} runs from its ${start.kind === 'form' ? 'form' : 'webhook'}${disabledNote(example)}`;
    if (start.kind === 'none') notRun(`docs/workflows/${example.file}`, start.why);
    if (start.kind !== 'webhook' && start.kind !== 'form') continue;
    await check(name, async () => {
      let response: Response;
      if (start.kind === 'webhook') {
        response = await fetch(`${base}${start.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(start.body),
          signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
        });
      } else {
        const form = new FormData();
        for (const [field, value] of Object.entries(start.fields)) form.append(field, value);
        response = await fetch(`${base}${start.path}`, { method: 'POST', body: form, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
      }
      const text = await response.text();
      expect(response.status === 200, `HTTP ${response.status}: ${text.slice(0, 300)}`);
      if (start.kind === 'webhook' && start.check) {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        const problem = start.check(body);
        expect(!problem, `the reply: ${problem}`);
      }
      const ended = await endedExecution(rest, example.id);
      expectOurNodesSucceeded(example, await rest.execution(ended.id));
    });
  }
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'gpu-cloud-e2e-'));
  const cleanups: Array<() => Promise<void>> = [];
  let server: Service | undefined;
  try {
    const install = await ensureN8n(log);
    log(
      install.installedNow
        ? `installed n8n@${N8N_VERSION} in ${(install.durationMs / 1000).toFixed(0)} s (${install.dir})`
        : `n8n@${N8N_VERSION} from the cache (${install.dir})`,
    );

    const unpacked = await packPackage(work);
    const n8n = new N8n({ install, root: join(work, 'n8n') });
    // As n8n's community-package installer leaves it: <user folder>/.n8n/nodes/node_modules/<name>.
    await mkdir(n8n.communityNodesDir, { recursive: true });
    const installedPackage = join(n8n.communityNodesDir, PKG);
    await rename(unpacked, installedPackage);
    // The same files as a custom extension directory (N8N_CUSTOM_EXTENSIONS), for the CUSTOM. check.
    const customDir = join(work, 'custom-extensions');
    await mkdir(customDir, { recursive: true });
    await runOrThrow('cp', ['-R', installedPackage, join(customDir, PKG)], { timeoutMs: 60_000 });

    const emulator = await startEmulator({ port: 0, jobDurationMs: JOB_DURATION_MS });
    cleanups.push(() => emulator.close());
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.close());
    log(`emulator at ${emulator.baseUrl}, n8n will listen on ${await n8n.baseUrl()}`);

    const marker = randomUUID();
    const examples = await loadExamples(REPO);
    await n8n.importCredentials(workflows.credentials(emulator));
    await n8n.importWorkflows([
      workflows.createJob(PKG, marker),
      workflows.listEndpoints(PKG),
      workflows.transcribePoll(PKG),
      workflows.workloads(PKG),
      workflows.listEndpoints(workflows.CUSTOM_PREFIX, workflows.IDS.customList),
      workflows.trigger(PKG, receiver.url('/trigger')),
      workflows.webhookResume(PKG, receiver.url('/resumed')),
      ...examples.map(importable),
    ]);
    log(`imported the credentials, the test's workflows and ${examples.length} example(s) from docs/workflows`);

    await cliChecks(n8n, marker, customDir, examples);

    server = await n8n.start();
    const base = await n8n.baseUrl();
    const rest = await N8nRest.setUpOwner(base);
    const served = examples.filter((example) => example.start.kind === 'webhook' || example.start.kind === 'form');
    // The editor's "Publish" button; it registers the production webhooks at once.
    for (const id of [workflows.IDS.trigger, workflows.IDS.resume, ...served.map((example) => example.id)]) await rest.activate(id);
    log(`n8n start: server up, ${2 + served.length} workflows activated`);

    await serverChecks(base, rest, emulator, receiver, marker, examples);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    checks.push({ name: 'setup', outcome: 'fail' });
    log(`FAIL setup\n       ${message.split('\n').join('\n       ')}`);
  } finally {
    if (server) await server.stop();
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    const failed = checks.some((entry) => entry.outcome === 'fail');
    if (KEEP || failed) log(`logs and n8n user folder kept in ${work}`);
    else await rm(work, { recursive: true, force: true });
  }
}

const watchdog = setTimeout(() => {
  log(`e2e: gave up after ${WHOLE_RUN_TIMEOUT_MS / 60_000} minutes`);
  process.exit(1);
}, WHOLE_RUN_TIMEOUT_MS);

void main().then(() => {
  clearTimeout(watchdog);
  const count = (outcome: Outcome) => checks.filter((entry) => entry.outcome === outcome).length;
  const notRunCount = count('not run');
  log(`total ${((Date.now() - runStarted) / 1000).toFixed(0)} s`);
  process.stdout.write(`e2e: ${count('pass')} passed, ${count('fail')} failed${notRunCount ? `, ${notRunCount} not run` : ''}\n`);
  process.exit(count('fail') > 0 ? 1 : 0);
});
