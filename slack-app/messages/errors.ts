import type { Subcommand } from '../services/command-parser';
import type { SlackMessage } from '../model';
import { context, escapeText, section } from './format';
import { usageLine } from './help';

/** A mistake in what the user typed: the problem, then how to write it. Sent ephemerally. */
export function usageErrorMessage(command: string, problem: string, subcommand?: Subcommand): SlackMessage {
  const usage = subcommand ? usageLine(command, subcommand) : `See \`${command} help\` for every subcommand.`;
  return {
    text: `${problem} Usage: ${subcommand ? usageLine(command, subcommand) : `${command} help`}`,
    blocks: [section(`:warning: ${escapeText(problem)}`), section(usage)],
  };
}

/** The service refused or failed: show its own words (problem detail, else title, else status). */
export function serviceErrorMessage(action: string, detail: string): SlackMessage {
  return {
    text: `${action} failed: ${detail}`,
    blocks: [section(`:x: *${escapeText(action)} failed.*\n${escapeText(detail)}`)],
  };
}

/** `contact` comes from the app's configuration and may be a mention (`<@U123>`), so it is not escaped. */
export function deniedMessage(reason: string, hint: string, contact: string): SlackMessage {
  return {
    text: `${reason} ${hint} ${contact}.`,
    blocks: [section(`:no_entry: ${escapeText(reason)}`), context(`${escapeText(hint)} ${contact}.`)],
  };
}

export function noticeMessage(text: string): SlackMessage {
  return { text, blocks: [section(escapeText(text))] };
}
