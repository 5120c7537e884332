/**
 * End to end in a real n8n: the full n8n app (not only n8n-core) loads the packed
 * n8n-nodes-gpu-cloud package the way a user's n8n installs it, runs workflows with `n8n execute`
 * and, as a server (`n8n start`), runs the trigger on a signed webhook and resumes a paused
 * execution when GPU Cloud reports the job's end. GPU Cloud is the local emulator; all traffic
 * stays on 127.0.0.1. See docs/e2e.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod/v4';
import { startEmulator } from '../../emulator';
import { signWebhook } from '../../shared/webhooks';
import { importable, loadExamples, ourNodeNames, unknownNodes } from './examples';
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
const WHOLE_RUN_TIMEOUT_MS = 25 * 60_000;
const KEEP = process.env.E2E_KEEP === '1';

type Check = { name: string; ok: boolean; ms: number; error?: string };
const checks: Check[] = [];
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
    checks.push({ name, ok: true, ms: Date.now() - started });
    log(`PASS ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    checks.push({ name, ok: false, ms: Date.now() - started, error: message });
    log(`FAIL ${name}\n       ${message.split('\n').join('\n       ')}`);
  }
}

/** A node's output items, or a failure that says what n8n reported instead. */
function outputOf(execution: Execution, node: string): Array<Record<string, unknown>> {
  const nodeError = execution.nodeErrors.get(node);
  expect(execution.status === 'success', `execution ${execution.status}: ${nodeError ?? execution.error ?? 'no error given'}`);
  const items = execution.outputs.get(node);
  expect(items, `node "${node}" did not run (ran: ${[...execution.outputs.keys()].join(', ')})`);
  return items;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const STORED_FILE = 'filesystem-v2:';
const reportSchema = z.object({ executionId: z.string(), item: z.record(z.string(), z.unknown()) });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The execution as n8n's executions list shows it once it is no longer running (its last node reported a moment ago). */
async function finishedExecution(rest: N8nRest, workflowId: string, executionId: string): Promise<ExecutionSummary> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const execution = (await rest.executions(workflowId)).find((entry) => entry.id === executionId);
    if (execution && execution.status !== 'running' && execution.status !== 'new') return execution;
    if (Date.now() > deadline) throw new CheckFailed(`execution ${executionId} still ${execution?.status ?? 'missing'} in n8n's list`);
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
    const installedPackage = join(n8n.communityNodesDir, workflows.PACKAGE_PREFIX);
    await rename(unpacked, installedPackage);
    // The same files as a custom extension directory (N8N_CUSTOM_EXTENSIONS), for the CUSTOM. check.
    const customDir = join(work, 'custom-extensions');
    await mkdir(customDir, { recursive: true });
    await runOrThrow('cp', ['-R', installedPackage, join(customDir, workflows.PACKAGE_PREFIX)], { timeoutMs: 60_000 });

    const emulator = await startEmulator({ port: 0, jobDurationMs: JOB_DURATION_MS });
    cleanups.push(() => emulator.close());
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.close());
    log(`emulator at ${emulator.baseUrl}, n8n will listen on ${await n8n.baseUrl()}`);

    const marker = randomUUID();
    const pkg = workflows.PACKAGE_PREFIX;
    await n8n.importCredentials(workflows.credentials(emulator));
    await n8n.importWorkflows([
      workflows.createJob(pkg, marker),
      workflows.listEndpoints(pkg),
      workflows.transcribePoll(pkg),
      workflows.listEndpoints(workflows.CUSTOM_PREFIX, workflows.IDS.customList),
      workflows.workloads(pkg),
      workflows.trigger(pkg, receiver.url('/trigger')),
      workflows.webhookResume(pkg, receiver.url('/resumed')),
    ]);
    const examples = await loadExamples(REPO);
    if (examples.length > 0) await n8n.importWorkflows(examples.map(importable), 'examples.json');
    log(`imported the credentials and workflows, and ${examples.length} example workflow(s) from docs/workflows`);

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
      expect(result.status === 'succeeded', `status ${String(result.status)}: ${JSON.stringify(result).slice(0, 300)}`);
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

    for (const example of examples.filter((entry) => entry.runnable)) {
      await check(`n8n execute: docs/workflows/${example.file} runs against the emulator`, async () => {
        const execution = await n8n.execute(example.id);
        for (const node of ourNodeNames(example)) {
          const items = outputOf(execution, node);
          expect(items.length > 0, `"${node}" output nothing`);
        }
      });
    }

    await n8n.publish(workflows.IDS.trigger);
    await n8n.publish(workflows.IDS.resume);
    server = await n8n.start();
    log('n8n start: server up, workflows active');
    const base = await n8n.baseUrl();
    const rest = await N8nRest.setUpOwner(base);

    await check('n8n start: the editor offers the nodes, the AI tool variant, both credentials and their icons', async () => {
      const nodeTypes = await rest.nodeTypes();
      const credentialTypes = await rest.credentialTypes();
      const icons: string[] = [];
      for (const name of ['gpuCloud', 'gpuCloudTrigger', 'gpuCloudTool']) {
        const type = nodeTypes.find((entry) => entry.name === `${pkg}.${name}`);
        expect(type, `n8n does not list ${pkg}.${name}`);
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
        const response = await fetch(`${base}/${icon}`);
        const body = await response.text();
        expect(response.status === 200 && body.includes('<svg'), `icon ${icon}: HTTP ${response.status}`);
      }
    });

    if (examples.length > 0) {
      await check('n8n start: every docs/workflows example uses node types and versions this n8n offers', async () => {
        const offered = await rest.nodeTypes();
        const problems = examples.flatMap((example) => unknownNodes(example, offered).map((problem) => `${example.file}: ${problem}`));
        expect(problems.length === 0, problems.join('\n'));
      });
    } else {
      log('no docs/workflows/*.json yet: nothing to check there');
    }

    await check('n8n start: the credential Test button accepts the key and rejects a wrong one', async () => {
      const data = { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, organizationName: emulator.organization };
      const good = await rest.testCredential({ ...workflows.CREDENTIALS.management, type: 'gpuCloudApi', data });
      expect(good.status === 'OK', `with the right key: ${good.status} ${good.message}`);
      const bad = await rest.testCredential({ ...workflows.CREDENTIALS.management, type: 'gpuCloudApi', data: { ...data, apiKey: 'not-the-key' } });
      expect(bad.status === 'Error', `with a wrong key: ${bad.status} ${bad.message}`);
    });

    await check('n8n start: the Inference Endpoint list (resource locator) is filled from GPU Cloud', async () => {
      const results = await rest.resourceLocatorResults({
        path: 'parameters.endpoint',
        methodName: 'searchEndpoints',
        nodeTypeAndVersion: { name: `${pkg}.gpuCloud`, version: 1 },
        currentNodeParameters: { resource: 'job', operation: 'create', endpoint: { __rl: true, mode: 'list', value: '' } },
        credentials: { gpuCloudApi: workflows.CREDENTIALS.management },
        filter: 'trans',
      });
      expect(results.some((entry) => entry.value === 'transcribe'), `got ${JSON.stringify(results).slice(0, 300)}`);
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
      });
      expect(response.status === 201, `creating the job on the emulator: HTTP ${response.status}`);
      const job = z.object({ id: z.string() }).parse(await response.json());
      const arrived = await receiver.waitFor('/trigger', (body) => reportSchema.safeParse(body).data?.item.id === job.id, WAIT_FOR_REPORT_MS);
      const { item } = reportSchema.parse(arrived.body);
      expect(item.status === 'succeeded', `status ${String(item.status)}`);
      expect(item.endpoint === 'transcribe', `endpoint ${String(item.endpoint)}`);
      expect(z.object({ e2e: z.literal(marker) }).safeParse(item.metadata).success, `metadata ${JSON.stringify(item.metadata)}`);
      expect(typeof item.webhookId === 'string' && item.webhookId.length > 0, 'no webhook-id: the signature was not checked');
      const execution = await finishedExecution(rest, workflows.IDS.trigger, reportSchema.parse(arrived.body).executionId);
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
      });
      expect(response.status === 401, `expected 401, got ${response.status}: ${(await response.text()).slice(0, 200)}`);
    });

    await check('n8n start: Transcribe (webhook wait) parks the execution and resumes on the callback', async () => {
      const resumeMarker = randomUUID();
      const started = await fetch(`${base}${workflows.RESUME_START_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'https://files.example/e2e-resume.mp3?signature=e2e', marker: resumeMarker }),
      });
      expect(started.status === 200, `starting the workflow: HTTP ${started.status}: ${(await started.text()).slice(0, 200)}`);
      const arrived = await receiver.waitFor('/resumed', (body) => reportSchema.safeParse(body).success, WAIT_FOR_REPORT_MS);
      const { item } = reportSchema.parse(arrived.body);
      expect(item.status === 'succeeded', `status ${String(item.status)}: ${JSON.stringify(item).slice(0, 300)}`);
      expect(item.waitTimedOut === undefined, 'the wait timed out instead of being resumed');
      expect(typeof item.text === 'string' && item.text.length > 0, 'no transcript text');
      const jobId = String(item.jobId);
      const resumedBy = emulator.deliveries.filter((delivery) => delivery.jobId === jobId && delivery.url.includes('/webhook-waiting/'));
      expect(resumedBy.some((delivery) => delivery.ok), `the emulator's call of the resume URL was not taken: ${JSON.stringify(resumedBy)}`);
      const execution = await finishedExecution(rest, workflows.IDS.resume, reportSchema.parse(arrived.body).executionId);
      expect(execution.status === 'success', `n8n lists the execution as ${JSON.stringify(execution)}`);
    });

    await check('n8n start: the forged delivery started nothing', async () => {
      const forgedRuns = receiver.all('/trigger').filter((entry) => reportSchema.safeParse(entry.body).data?.item.id === forgedJobId);
      expect(forgedRuns.length === 0, 'the trigger ran its workflow for a forged delivery');
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    checks.push({ name: 'setup', ok: false, ms: 0, error: message });
    log(`FAIL setup\n       ${message.split('\n').join('\n       ')}`);
  } finally {
    if (server) await server.stop();
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    const failed = checks.filter((entry) => !entry.ok);
    if (KEEP || failed.length > 0) log(`logs and n8n user folder kept in ${work}`);
    else await rm(work, { recursive: true, force: true });
  }
}

const watchdog = setTimeout(() => {
  log(`e2e: gave up after ${WHOLE_RUN_TIMEOUT_MS / 60_000} minutes`);
  process.exit(1);
}, WHOLE_RUN_TIMEOUT_MS);

main().then(() => {
  clearTimeout(watchdog);
  const passed = checks.filter((entry) => entry.ok).length;
  const failed = checks.length - passed;
  log(`total ${((Date.now() - runStarted) / 1000).toFixed(0)} s`);
  process.stdout.write(`e2e: ${passed} passed, ${failed} failed\n`);
  process.exit(failed > 0 ? 1 : 0);
});
