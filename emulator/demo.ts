/**
 * A short tour of the shared client against the embedded emulator: a recording made by text to
 * speech, then transcribed from creation to result, an image written to a file, and a streamed chat answer. No account needed.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod/v4';
import { requireSucceeded } from '../shared/wait';
import { transcriptionOutputSchema } from '../shared/schemas';
import { createManagementClient, createWorkloadClient, sharedTransport } from '../shared/runtime';
import { startEmulator } from './index';

const speechOutputSchema = z.object({ url: z.string(), duration_in_seconds: z.number() });

async function main(): Promise<void> {
	const emulator = await startEmulator({ jobDurationMs: 1500 });
	const gpu = createManagementClient({
		baseUrl: emulator.baseUrl,
		organization: emulator.organization,
		apiKey: emulator.apiKey,
	});
	try {
		console.log(`Emulator at ${emulator.baseUrl}\n`);

		// The service downloads the file to transcribe, so the tour records one first: text to speech.
		const speech = requireSucceeded(
			await gpu.jobs.wait(
				'text-to-speech',
				(
					await gpu.jobs.create('text-to-speech', {
						input: { text: 'Welcome to the weekly planning meeting of the platform team.' },
					})
				).id,
			),
		);
		const recording = speechOutputSchema.parse(speech.output);
		console.log(`Recorded ${recording.duration_in_seconds} s of speech at ${recording.url}`);
		const job = await gpu.jobs.create('transcribe', {
			input: {
				url: recording.url,
				summarize: 30,
				llm_translation: 'French',
			},
		});
		console.log(`Created transcription job ${job.id} (${job.status})`);
		const done = requireSucceeded(
			await gpu.jobs.wait('transcribe', job.id, {
				onProgress: (j) => console.log(`  … ${j.status}`),
			}),
		);
		const transcript = transcriptionOutputSchema.parse(done.output);
		console.log(
			`Transcript: ${transcript.text}\nSummary: ${transcript.summary}\nFrench: ${transcript.llm_translation?.French}\n`,
		);

		const images = createWorkloadClient({ serviceUrl: emulator.imageUrl, apiKey: emulator.apiKey });
		const result = await images.images.generate({
			kind: 'text',
			workflow: 'txt2img',
			request: { input: { prompt: 'a red fox in the snow', width: 512, height: 512, seed: 7 } },
		});
		const dir = join(process.cwd(), 'demo-output');
		await mkdir(dir, { recursive: true });
		const file = join(dir, result.filenames?.[0] ?? `${result.id}.png`);
		await writeFile(file, result.images[0]);
		console.log(`Image written to ${file}\n`);

		const chat = createWorkloadClient({ serviceUrl: emulator.chatUrl, apiKey: emulator.apiKey });
		process.stdout.write('Chat: ');
		for await (const delta of chat.chat.stream({
			messages: [{ role: 'user', content: 'What is an interruptible GPU node?' }],
			max_tokens: 60,
		})) {
			process.stdout.write(delta.content);
		}
		process.stdout.write('\n');
	} finally {
		await sharedTransport().close();
		await emulator.close();
	}
}

main().catch((error: unknown) => {
	console.error(error instanceof Error ? error.message : error);
	process.exitCode = 1;
});
