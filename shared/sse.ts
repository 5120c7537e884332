/**
 * Splits a server-sent-events byte stream into the `data:` payloads of its events. Comment lines
 * (keep-alives) and other fields are skipped; multi-line data is joined with newlines.
 */
export async function* sseData(body: AsyncIterable<Uint8Array>): AsyncIterable<string> {
	const decoder = new TextDecoder();
	let buffer = '';
	let data: string[] = [];
	const flushLine = function* (line: string): Generator<string> {
		if (line === '') {
			if (data.length > 0) yield data.join('\n');
			data = [];
		} else if (line.startsWith('data:')) {
			data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
		}
	};
	for await (const chunk of body) {
		buffer += decoder.decode(chunk, { stream: true });
		let newline: number;
		while ((newline = buffer.search(/\r?\n/)) >= 0) {
			const line = buffer.slice(0, newline);
			buffer = buffer.slice(buffer[newline] === '\r' ? newline + 2 : newline + 1);
			yield* flushLine(line);
		}
	}
	buffer += decoder.decode();
	if (buffer.length > 0) yield* flushLine(buffer);
	yield* flushLine('');
}
