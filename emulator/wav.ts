/**
 * A mono 8-bit PCM WAV of `seconds` at `sampleRate`, its samples from `level` (-1 to 1 at sample
 * index i): real, playable audio whose header gives its exact length, for readers that parse it.
 */
export function pcmWav(
	seconds: number,
	sampleRate: number,
	level: (sample: number) => number,
): Buffer {
	const samples = Math.round(seconds * sampleRate);
	const wav = Buffer.alloc(44 + samples);
	wav.write('RIFF', 0);
	wav.writeUInt32LE(36 + samples, 4);
	wav.write('WAVEfmt ', 8);
	wav.writeUInt32LE(16, 16);
	wav.writeUInt16LE(1, 20); // PCM
	wav.writeUInt16LE(1, 22); // mono
	wav.writeUInt32LE(sampleRate, 24);
	wav.writeUInt32LE(sampleRate, 28); // byte rate: one byte per sample
	wav.writeUInt16LE(1, 32);
	wav.writeUInt16LE(8, 34);
	wav.write('data', 36);
	wav.writeUInt32LE(samples, 40);
	for (let i = 0; i < samples; i++) wav[44 + i] = 128 + Math.round(60 * level(i));
	return wav;
}

/** A steady tone of `frequency` Hz. */
export function toneWav(seconds: number, { sampleRate = 8000, frequency = 440 } = {}): Buffer {
	return pcmWav(seconds, sampleRate, (i) => Math.sin((2 * Math.PI * frequency * i) / sampleRate));
}
