/**
 * A real mono 8-bit PCM WAV of `seconds` (a 440 Hz tone at 8 kHz, or at `rate` samples a second),
 * so a reader that parses its header finds that duration.
 */
export function wavFile(seconds: number, rate = 8000): Buffer {
	const samples = Math.round(seconds * rate);
	const wav = Buffer.alloc(44 + samples);
	wav.write('RIFF', 0);
	wav.writeUInt32LE(36 + samples, 4);
	wav.write('WAVEfmt ', 8);
	wav.writeUInt32LE(16, 16);
	wav.writeUInt16LE(1, 20);
	wav.writeUInt16LE(1, 22);
	wav.writeUInt32LE(rate, 24);
	wav.writeUInt32LE(rate, 28);
	wav.writeUInt16LE(1, 32);
	wav.writeUInt16LE(8, 34);
	wav.write('data', 36);
	wav.writeUInt32LE(samples, 40);
	for (let i = 0; i < samples; i++)
		wav[44 + i] = 128 + Math.round(60 * Math.sin((2 * Math.PI * 440 * i) / rate));
	return wav;
}
