// The plain JSON reader against the parser it stands in for: every body sent to both over real
// HTTP must come out as the same req.body, or as an error of the same status and type (which is
// all errors.ts answers by).
import express, { type Request, type RequestHandler } from 'express';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainJsonLength, readPlainJson } from './plain-json-body.ts';

const LIMIT = 4096;
const bodyParser = express.json({ limit: LIMIT, strict: true, type: 'application/json' });

type Outcome = { body: unknown } | { status: number; type: string };

const outcomeOf = (error: unknown, req: Request): Outcome => {
  if (error === undefined) return { body: req.body as unknown };
  const { status, type } = error as { status: number; type: string };
  return { status, type };
};

const viaBodyParser: RequestHandler = (req, res) => bodyParser(req, res, (error?: unknown) => res.json(outcomeOf(error, req)));
const viaPlainReader: RequestHandler = async (req, res) => {
  const length = plainJsonLength(req, LIMIT);
  if (length === null) {
    res.json({ declined: true });
    return;
  }
  res.json(outcomeOf(await readPlainJson(req, length), req));
};

let server: Server;
let port: number;
beforeAll(async () => {
  const app = express();
  app.post('/body-parser', viaBodyParser);
  app.post('/plain', viaPlainReader);
  server = createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Posts raw bytes with exactly these headers (fetch would add or fix some). */
async function post(path: string, body: Buffer, headers: IncomingHttpHeaders): Promise<unknown> {
  const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers });
  req.end(body);
  const [response] = (await once(req, 'response')) as [import('node:http').IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const jsonHeaders = (body: Buffer, type = 'application/json') => ({ 'content-type': type, 'content-length': String(body.length) });

describe('readPlainJson reads what body-parser reads, the same way', () => {
  const bodies: [string, Buffer][] = [
    ['an object', Buffer.from('{"email":"reader@example.com","source":"/"}')],
    ['an array', Buffer.from('[1,2,3]')],
    ['leading whitespace', Buffer.from(' \r\n\t{"email":"a@example.com"}')],
    ['a byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"email":"bom@example.com"}')])],
    ['multi-byte characters', Buffer.from('{"email":"ｒｅａｄｅｒ@ｅｘａｍｐｌｅ.ｃｏｍ","note":"é ✓ 😀"}')],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
    ['a number (not an object or array)', Buffer.from('42')],
    ['a string (not an object or array)', Buffer.from('"reader@example.com"')],
    ['null', Buffer.from('null')],
    ['only whitespace', Buffer.from('   ')],
    ['broken JSON', Buffer.from('{"email": ')],
    ['a trailing comma', Buffer.from('{"email":"a@example.com",}')],
    ['a non-breaking space before the object', Buffer.from('\u00a0{"email":"a@example.com"}')],
    ['a body of exactly the limit', Buffer.from(`{"email":"a@example.com","pad":"${'x'.repeat(LIMIT - 34)}"}`)],
  ];

  it.each(bodies)('%s', async (_name, body) => {
    const headers = jsonHeaders(body);
    const expected = await post('/body-parser', body, headers);
    const actual = await post('/plain', body, headers);
    expect(actual).toEqual(expected);
  });

  it('the limit case above is exactly the limit', () => {
    expect(bodies.at(-1)![1].length).toBe(LIMIT);
  });

  it.each(['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8'])('reads content type %s', async (type) => {
    const body = Buffer.from('{"email":"a@example.com"}');
    expect(await post('/plain', body, jsonHeaders(body, type))).toEqual({ body: { email: 'a@example.com' } });
  });
});

describe('plainJsonLength leaves every other body to body-parser', () => {
  const body = Buffer.from('{"email":"a@example.com"}');
  const declined: [string, IncomingHttpHeaders][] = [
    ['a form', { ...jsonHeaders(body, 'application/x-www-form-urlencoded') }],
    ['another charset', { ...jsonHeaders(body, 'application/json; charset=utf-16') }],
    ['a JSON-like type', { ...jsonHeaders(body, 'application/ld+json') }],
    ['a compressed body', { ...jsonHeaders(body), 'content-encoding': 'gzip' }],
    ['no Content-Length', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }],
    ['a body over the limit', { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) }],
    ['an empty body', { 'content-type': 'application/json', 'content-length': '0' }],
    ['a Content-Length with a sign', { 'content-type': 'application/json', 'content-length': '+25' }],
  ];

  it.each(declined)('%s', (_name, headers) => {
    expect(plainJsonLength({ headers }, LIMIT)).toBeNull();
  });

  it('takes a plain JSON body within the limit', () => {
    expect(plainJsonLength({ headers: jsonHeaders(body) }, LIMIT)).toBe(body.length);
  });
});
