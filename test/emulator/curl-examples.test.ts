import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startEmulator } from '../../emulator';

/** docs/emulator.md's curl block, pasted into a shell as written (its port swapped for a free one). */

it('runs every curl example of docs/emulator.md against the emulator, and each answers as its comment says', async () => {
	const doc = await readFile(join(__dirname, '..', '..', 'docs', 'emulator.md'), 'utf8');
	const section = doc.slice(doc.indexOf('### Try it with curl'));
	const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
	expect(block).toContain('curl');
	const emulator = await startEmulator({ port: 0, jobDurationMs: 60_000 });
	try {
		const port = new URL(emulator.baseUrl).port;
		const cwd = await mkdtemp(join(tmpdir(), 'gpu-curl-'));
		const { stdout } = await promisify(execFile)(
			'sh',
			['-e', '-c', block.replaceAll('127.0.0.1:4010', `127.0.0.1:${port}`)],
			{ timeout: 20_000, cwd },
		);
		expect(JSON.parse(await readFile(join(cwd, 'fox.json'), 'utf8'))).toMatchObject({
			images: [expect.any(String)],
		});
		await rm(cwd, { recursive: true });
		for (const expected of [
			'"page_size":2',
			'"name":"echo"',
			'"status":"pending"',
			'202\n',
			'"name":"my-queue"',
			'"secret_key"',
			'image: 200, ',
			'data: [DONE]',
		])
			expect([expected, stdout.includes(expected)]).toEqual([expected, true]);
	} finally {
		await emulator.close();
	}
});
