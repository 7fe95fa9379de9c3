// Reads the embedded outbox the way a person reads their mail: each .eml's headers, its HTML and
// text parts (quoted-printable decoded), and the links in them.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Store } from '../../server/store/types.ts';

export interface Eml {
  name: string;
  headers: Record<string, string>;
  raw: string;
  to: string;
  subject: string;
  html: string;
  text: string;
}

/** Header block unfolded (RFC 5322 §2.2.3), names lower-cased. */
function headersOf(raw: string): Record<string, string> {
  const head = raw.split(/\r?\n\r?\n/, 1)[0]!.replace(/\r?\n(?=[ \t])/g, '');
  const headers: Record<string, string> = {};
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The body of the MIME part with this content type, quoted-printable decoded. */
function part(raw: string, headers: Record<string, string>, contentType: string): string {
  const boundary = /boundary="([^"]+)"/.exec(headers['content-type'] ?? '')?.[1];
  if (!boundary) return '';
  const section = raw.split(`--${boundary}`).find((s) => s.includes(`Content-Type: ${contentType}`)) ?? '';
  const body = section.split(/\r?\n\r?\n/).slice(1).join('\n\n');
  return Buffer.from(body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
}

export async function readOutbox(dir: string): Promise<Eml[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml')).sort();
  return Promise.all(
    names.map(async (name) => {
      const raw = await readFile(join(dir, name), 'utf8');
      const headers = headersOf(raw);
      return {
        name,
        headers,
        raw,
        to: (/<([^<>]+)>/.exec(headers.to ?? '')?.[1] ?? headers.to ?? '').toLowerCase(),
        subject: headers.subject ?? '',
        html: part(raw, headers, 'text/html'),
        text: part(raw, headers, 'text/plain'),
      };
    }),
  );
}

/** Every href in the HTML part that starts with this prefix (HTML entities undone). */
export function linksIn(eml: Eml, prefix: string): string[] {
  return [...eml.html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&')).filter((href) => href.startsWith(prefix));
}

/** A test server's outbox directory and the store whose outbox rows its worker sends. */
export interface OutboxOf {
  outboxDir: string;
  store: Pick<Store, 'outboxSummary'>;
}

/**
 * The outbox once the app's worker has nothing left to send. A signup's e-mail is queued in the
 * same transaction as its answer and written by the worker just after, so once the store holds
 * no queued or retrying message, every e-mail promised so far is in the directory (or failed).
 * After `timeoutMs` it reads what is there, and the test's own expectations say what is missing.
 */
export async function settledOutbox(server: OutboxOf, timeoutMs = 20_000): Promise<Eml[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { queued, retrying } = await server.store.outboxSummary(1);
    if (queued + retrying === 0 || Date.now() > deadline) return readOutbox(server.outboxDir);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The e-mails to `to` that arrived in the app's outbox since `before` (their names), once there
 * are `count` of them and the worker has nothing left to send, so that no more can follow.
 */
export async function newMailIn(server: OutboxOf, before: ReadonlySet<string>, to: string, { count = 1 } = {}): Promise<Eml[]> {
  const arrived = (mail: Eml[]) => mail.filter((eml) => !before.has(eml.name) && eml.to === to);
  const deadline = Date.now() + 20_000;
  while (arrived(await readOutbox(server.outboxDir)).length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return arrived(await settledOutbox(server));
}
