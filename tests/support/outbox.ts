// Reads the embedded outbox the way a person reads their mail: each .eml's headers, its HTML and
// text parts (quoted-printable decoded), and the links in them.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

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

/**
 * The outbox once mail has stopped arriving: signups answer before their e-mail is sent (so the
 * answer's timing tells nobody whether one was due), so a test reads it when no new .eml has
 * appeared for `quietMs`.
 */
export async function settledOutbox(dir: string, quietMs = 1_500, timeoutMs = 20_000): Promise<Eml[]> {
  const started = Date.now();
  let count = -1;
  for (;;) {
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml'));
    if (names.length === count || Date.now() - started > timeoutMs) return readOutbox(dir);
    count = names.length;
    await new Promise((resolve) => setTimeout(resolve, quietMs));
  }
}

/**
 * The e-mails to `to` that arrived in the outbox `dir` since `before` (their names), once there are
 * `count` of them: the mail outbox's worker sends them just after the answer. A second look
 * `quietMs` later makes sure no more follow.
 */
export async function newMailIn(dir: string, before: ReadonlySet<string>, to: string, { count = 1, quietMs = 500 } = {}): Promise<Eml[]> {
  const read = async () => (await readOutbox(dir)).filter((eml) => !before.has(eml.name) && eml.to === to);
  const deadline = Date.now() + 20_000;
  while ((await read()).length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, quietMs));
  return read();
}
