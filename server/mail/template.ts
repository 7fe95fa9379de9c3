// Filling a template's `{{{NAME}}}` placeholders the way Resend does: the value as given, nothing
// escaped. The outbox fills messages with it, so its .eml files hold what Resend would send.
import type { BatchMessage, OutgoingMessage } from './types.ts';

const PLACEHOLDER = /\{\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\}/g;

/** The names of the placeholders a text uses, each once, in order of first use. */
export function placeholdersIn(...texts: string[]): string[] {
  return [...new Set(texts.flatMap((text) => [...text.matchAll(PLACEHOLDER)].map((match) => match[1]!)))];
}

export function fillTemplate(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    const value = variables[name];
    if (value === undefined) throw new Error(`No value for the template variable ${name}`);
    return value;
  });
}

/** The message with its whole body: a templated one filled in. */
export function wholeMessage(message: BatchMessage): OutgoingMessage {
  if (!('template' in message)) return message;
  const { template, variables, ...envelope } = message;
  return { ...envelope, html: fillTemplate(template.html, variables), text: fillTemplate(template.text, variables) };
}
