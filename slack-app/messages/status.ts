import type { Job } from '../../shared/schemas';
import type { SlackMessage } from '../model';
import {
	codeBlock,
	context,
	escapeText,
	escapeWithin,
	readableJson,
	section,
	slackDate,
	utcMinute,
} from './format';
import { statusLine } from './parent';

/** `/gpu status <id>`, shown to the asker only. */
export function jobStatusMessage(job: Job, nowMs: number): SlackMessage {
	const started = Date.parse(job.create_time);
	const ended =
		job.status === 'pending' || job.status === 'running' ? nowMs : Date.parse(job.update_time);
	const status = statusLine(job.status, ended - started, started);
	// Each reader sees the times in their own time zone; the fallback is UTC.
	const events = job.events
		.map((event) => `${escapeText(event.action)} ${localTime(Date.parse(event.time))}`)
		.join(' → ');
	const blocks = [
		section(`Job \`${job.id}\` on \`${escapeText(job.inference_endpoint_name)}\`\n${status}`),
	];
	if (events) blocks.push(context(events));
	if (job.output !== undefined)
		blocks.push(section(`*Output*\n${codeBlock(readableJson(job.output), 1500)}`));
	return { text: `Job ${escapeText(job.id)}: ${job.status}`, blocks };
}

function localTime(ms: number): string {
	return slackDate(ms, '{date_short_pretty} {time}', utcMinute(ms));
}

export function inputMessage(title: string, input: unknown): SlackMessage {
	return {
		text: `${escapeText(title)}: ${escapeWithin(readableJson(input), 500)}`,
		blocks: [section(`*${escapeText(title)}*\n${codeBlock(readableJson(input))}`)],
	};
}
