import type { Subcommand } from '../services/command-parser';
import type { SlackMessage } from '../model';
import { context, escapeText, mention, section } from './format';
import { usageLine } from './help';

/** A mistake in what the user typed: the problem, then how to write it. Sent ephemerally. */
export function usageErrorMessage(command: string, problem: string, subcommand?: Subcommand): SlackMessage {
  const usage = subcommand ? usageLine(command, subcommand) : `See \`${command} help\` for every subcommand.`;
  return {
    text: `${escapeText(problem)} Usage: ${subcommand ? usageLine(command, subcommand) : `${command} help`}`,
    blocks: [section(`:warning: ${escapeText(problem)}`), section(usage)],
  };
}

/** The service refused or failed: show its own words (problem detail, else title, else status). */
export function serviceErrorMessage(action: string, detail: string): SlackMessage {
  return {
    text: `${escapeText(action)} failed: ${escapeText(detail)}`,
    blocks: [section(`:x: *${escapeText(action)} failed.*\n${escapeText(detail)}`)],
  };
}

/** `contact` comes from the app's configuration and may be a mention (`<@U123>`), so it is not escaped. */
export function deniedMessage(reason: string, hint: string, contact: string): SlackMessage {
  return {
    text: `${escapeText(reason)} ${escapeText(hint)} ${contact}.`,
    blocks: [section(`:no_entry: ${escapeText(reason)}`), context(`${escapeText(hint)} ${contact}.`)],
  };
}

/** Only the person who started a job may cancel it; the owner comes from the job's sealed metadata. */
export function notOwnerMessage(owner: string, jobId: string): SlackMessage {
  const text = `Only ${mention(owner)}, who started job ${escapeText(jobId)}, can cancel it.`;
  return { text, blocks: [section(text)] };
}

export function noticeMessage(text: string): SlackMessage {
  return { text: escapeText(text), blocks: [section(escapeText(text))] };
}
