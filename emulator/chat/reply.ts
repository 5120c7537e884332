import type { ChatMessage } from '../../shared/schemas';
import { wordsOf } from '../determinism';

/** Tokens a chat template adds around each message. */
const TOKENS_PER_MESSAGE = 3;

function quote(text: string, words: number): string {
  const all = wordsOf(text);
  return all.length > words ? `${all.slice(0, words).join(' ')}…` : all.join(' ');
}

/** Words stand in for tokens: close enough for usage figures and limits. */
export function promptTokens(messages: readonly ChatMessage[]): number {
  return messages.reduce((sum, message) => sum + wordsOf(message.content).length + TOKENS_PER_MESSAGE, 0);
}

/**
 * A readable, deterministic answer that depends on the conversation: it quotes the last user
 * message, counts the earlier turns and mentions the system instruction.
 */
export function composeReply(messages: readonly ChatMessage[]): string {
  const userIndex = messages.map((m) => m.role).lastIndexOf('user');
  const last = messages[userIndex >= 0 ? userIndex : messages.length - 1];
  const content = last?.content.trim() ?? '';
  const earlier = messages.slice(0, Math.max(0, userIndex)).filter((m) => m.role !== 'system');
  const firstUser = earlier.find((m) => m.role === 'user');
  const system = messages.find((m) => m.role === 'system' && m.content.trim().length > 0);
  const words = wordsOf(content).length;
  const parts = [
    content ? `You wrote: "${quote(content, 24)}".` : 'You sent an empty message.',
    `That message has ${words} word${words === 1 ? '' : 's'}${content.endsWith('?') ? ' and asks a question' : ''}.`,
    earlier.length === 0
      ? 'This is the first turn of our conversation.'
      : `Before it came ${earlier.length} earlier message${earlier.length === 1 ? '' : 's'}${firstUser ? `, starting with "${quote(firstUser.content, 8)}"` : ''}.`,
  ];
  if (system) parts.push(`I am following the instruction "${quote(system.content, 12)}".`);
  parts.push('This answer comes from the GPU Cloud emulator, so it follows a template instead of a language model.');
  return parts.join(' ');
}

/** Cuts the reply to `maxTokens` words; `length` tells the caller it was cut. */
export function limitReply(reply: string, maxTokens: number | undefined): { words: string[]; finishReason: 'stop' | 'length' } {
  const words = wordsOf(reply);
  if (maxTokens === undefined || words.length <= maxTokens) return { words, finishReason: 'stop' };
  return { words: words.slice(0, maxTokens), finishReason: 'length' };
}
