// Every hostile input in tests/site/hostile-inputs.json against the production build, in file order.
// Each case checks its own status (and error code, message, redirect, stored address); every case
// also checks the rules that hold for all of them: a 4xx carries a message a person can read, no
// answer shows a stack trace or a server file path, no 5xx (unless the case documents one), no
// row is written unless the case says so, no probe fragment is reflected verbatim, and afterwards
// Object.prototype is untouched.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../server/site/load-renderer.ts';
import { createUnsubscribeToken } from '../../server/subscribers/signed-links.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';
import { addSignup } from '../support/store-ops.ts';

type SvixMode = 'valid' | 'stale' | 'future' | 'forged' | 'truncated' | 'other-body' | 'garbage' | 'id-only' | 'none';

interface HostileCase {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent as application/json. */
  json?: unknown;
  /** Sent as it is, with `headers`. */
  body?: string;
  gzip?: boolean;
  svix?: SvixMode;
  /** 'unconfigured': the app without a webhook signing secret. */
  server?: 'unconfigured';
  status: number;
  error?: string;
  /** Part of the human message (case-insensitive). */
  message?: string;
  location?: string;
  /** Rows the request adds (default 0). */
  adds?: number;
  /** The normalised address that must be stored afterwards. */
  stores?: string;
  contains?: string[];
  notContains?: string[];
  /** Why a 5xx is the documented answer. */
  note?: string;
}

const data = JSON.parse(readFileSync(new URL('./hostile-inputs.json', import.meta.url), 'utf8')) as { probes: string[]; cases: HostileCase[] };

const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();

let server: TestServer;
let unconfigured: TestServer;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer({ config: { rateLimitPerMinute: 1e9, resendWebhookSecret: WEBHOOK_SECRET } });
  unconfigured = await startTestServer({ store: server.store, config: { rateLimitPerMinute: 1e9, resendWebhookSecret: undefined } });
  await addSignup(server.store, 'token.holder@example.com', '/');
  const holder = await server.store.findSubscriberByEmail('token.holder@example.com');
  const token = createUnsubscribeToken(holder!.id, TEST_UNSUBSCRIBE_SECRET);
  Object.assign(tokens, {
    token,
    tokenTruncated: token.slice(0, -1),
    tokenForged: createUnsubscribeToken(holder!.id, 'another-secret-another-secret-another-secret'),
    tokenTampered: `${createUnsubscribeToken(`${holder!.id}0`, TEST_UNSUBSCRIBE_SECRET).split('.')[0]}.${token.split('.')[1]}`,
    tokenUnknown: createUnsubscribeToken(randomUUID(), TEST_UNSUBSCRIBE_SECRET),
  });
});

afterAll(async () => {
  await unconfigured?.close();
  await server?.close();
});

function expand(text: string): string {
  return text
    .replace(/\{\{repeat:(.+?):(\d+)\}\}/g, (_match, unit: string, times: string) => unit.repeat(Number(times)))
    .replace(/\{\{(token\w*)\}\}/g, (_match, name: string) => {
      if (!tokens[name]) throw new Error(`Unknown placeholder ${name}`);
      return tokens[name];
    });
}

function svixHeaders(mode: SvixMode, body: string): Record<string, string> {
  const id = `msg_${randomUUID()}`;
  const sign = (at: Date, secret = WEBHOOK_SECRET, payload = body) => ({
    'svix-id': id,
    'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
    'svix-signature': new Webhook(secret).sign(id, at, payload),
  });
  const now = new Date();
  switch (mode) {
    case 'valid':
      return sign(now);
    case 'stale':
      return sign(new Date(now.getTime() - 10 * 60_000));
    case 'future':
      return sign(new Date(now.getTime() + 10 * 60_000));
    case 'forged':
      return sign(now, `whsec_${randomBytes(24).toString('base64')}`);
    case 'truncated': {
      const headers = sign(now);
      return { ...headers, 'svix-signature': headers['svix-signature'].slice(0, -6) };
    }
    case 'other-body':
      return sign(now, WEBHOOK_SECRET, `${body} `);
    case 'garbage':
      return { ...sign(now), 'svix-signature': 'v1,not-a-signature' };
    case 'id-only':
      return { 'svix-id': id };
    case 'none':
      return {};
  }
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(target: TestServer, hostile: HostileCase): Promise<Answer> {
  const headers: Record<string, string> = { ...hostile.headers };
  let payload: Buffer | undefined;
  if (hostile.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    payload = Buffer.from(expand(JSON.stringify(hostile.json)));
  } else if (hostile.body !== undefined) {
    payload = Buffer.from(expand(hostile.body));
  }
  if (hostile.svix) Object.assign(headers, svixHeaders(hostile.svix, payload?.toString('utf8') ?? ''));
  if (payload && hostile.gzip) payload = gzipSync(payload);
  if (payload) headers['content-length'] = String(payload.length);
  const { hostname, port } = new URL(target.url);
  return new Promise((resolve, reject) => {
    // node:http sends the path exactly as written (fetch would normalise `..` and `//`).
    const req = request({ host: hostname, port, method: hostile.method, path: expand(hostile.path), headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const textOf = (html: string) => html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();

/** The words a person reads in an error answer, whatever its format. */
function humanMessage(answer: Answer): string {
  const type = String(answer.headers['content-type'] ?? '');
  if (type.startsWith('application/json')) {
    const parsed = JSON.parse(answer.body) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : '';
  }
  if (type.startsWith('text/html')) {
    const heading = /<h1[^>]*>([\s\S]*?)<\/h1>/.exec(answer.body)?.[1] ?? '';
    const paragraphs = [...answer.body.matchAll(/<p[^>]*>([\s\S]*?)<\/p>/g)].map((match) => match[1]).join(' ');
    return textOf(`${heading} ${paragraphs}`);
  }
  return answer.body.trim();
}

const counts = async () => {
  const { active, inactive } = await server.store.countSubscribers();
  return active + inactive;
};

describe('hostile inputs', () => {
  it('the data file has at least 100 cases, each with a name and an expected status', () => {
    expect(data.cases.length).toBeGreaterThanOrEqual(100);
    expect(new Set(data.cases.map((c) => c.name)).size).toBe(data.cases.length);
    for (const hostile of data.cases) expect(hostile.status, hostile.name).toBeGreaterThanOrEqual(200);
  });

  for (const hostile of data.cases) {
    it(`${hostile.method} ${hostile.path.slice(0, 60)}: ${hostile.name} → ${hostile.status}`, async () => {
      const target = hostile.server === 'unconfigured' ? unconfigured : server;
      const before = await counts();
      const answer = await send(target, hostile);
      const after = await counts();

      expect(answer.status).toBe(hostile.status);
      if (answer.status >= 500) expect(hostile.note, 'a 5xx must be the documented answer').toBeTruthy();
      expect(after - before, 'rows written').toBe(hostile.adds ?? 0);
      if (hostile.stores) expect(await server.store.findSubscriberByEmail(hostile.stores)).not.toBeNull();

      const type = String(answer.headers['content-type'] ?? '');
      if (answer.status === 409) {
        // A duplicate is not an error; its answer is the documented contract.
        expect(JSON.parse(answer.body)).toEqual({ status: 'already_subscribed' });
      } else if (answer.status >= 400) {
        expect(type).toMatch(/^(application\/json|text\/html|text\/plain)/);
        const message = humanMessage(answer);
        expect(message.length, `message: ${message}`).toBeGreaterThanOrEqual(10);
        if (hostile.message) expect(message.toLowerCase()).toContain(hostile.message.toLowerCase());
        if (type.startsWith('application/json')) {
          const parsed = JSON.parse(answer.body) as { error?: string };
          if (hostile.error) expect(parsed.error).toBe(hostile.error);
        } else {
          expect(hostile.error, 'an error code is only checked on JSON answers').toBeUndefined();
        }
      }
      if (hostile.location !== undefined) expect(answer.headers.location).toBe(hostile.location);
      expect(String(answer.headers.location ?? '')).not.toMatch(/[<>"\s]/);

      const body = answer.body.replaceAll('<!-- -->', '');
      for (const expected of hostile.contains ?? []) expect(body).toContain(expected);
      for (const forbidden of hostile.notContains ?? []) expect(body).not.toContain(forbidden);
      for (const probe of data.probes) expect(body, 'reflected verbatim').not.toContain(probe);
      // No stack trace lines and no paths of this machine's files.
      expect(body).not.toMatch(/^\s*at \S.*:\d+:\d+\)?\s*$/m);
      expect(body).not.toContain(ROOT_DIR);
      expect(body).not.toContain('node_modules');
      expect(body).not.toContain('file://');
    });
  }

  it('left Object.prototype as it was', () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
    const plain = {} as Record<string, unknown>;
    expect(plain.polluted).toBeUndefined();
    expect(plain.isAdmin).toBeUndefined();
    expect(plain.email).toBeUndefined();
  });
});
