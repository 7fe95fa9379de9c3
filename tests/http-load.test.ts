// The signup bench's load generator (bench/support/http-load.ts) against a real Node server: it
// must count what the server answered, send each request as built, and stop on what it cannot read.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAnswer, runLoad } from '../bench/support/http-load.ts';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function listen(handler: RequestListener): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('http load generator', () => {
  it('sends each request as built and counts every answer by status', async () => {
    const seen: { method?: string; url?: string; type?: string; body: string }[] = [];
    const url = await listen((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, type: req.headers['content-type'], body });
        // Every third request is refused, so the tally must keep two statuses apart.
        res.statusCode = seen.length % 3 === 0 ? 429 : 201;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ n: seen.length, note: 'é' }));
      });
    });
    let sequence = 0;
    const result = await runLoad({
      url,
      connections: 4,
      seconds: 0.5,
      next: () => ({ method: 'POST', path: '/api/subscribe', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `r${sequence++}@example.com` }) }),
    });
    expect(result.requests).toBeGreaterThan(10);
    const tally = Object.fromEntries(result.statuses);
    expect(tally[201]! + tally[429]!).toBe(result.requests);
    expect(tally[429]).toBeGreaterThan(0);
    // Answers that arrive after the measured time are drained, not counted: the server saw at least as many.
    expect(seen.length).toBeGreaterThanOrEqual(result.requests);
    expect(seen[0]).toEqual({ method: 'POST', url: '/api/subscribe', type: 'application/json', body: '{"email":"r0@example.com"}' });
    expect(new Set(seen.map((request) => request.body)).size).toBe(seen.length);
    expect(result.rate).toBeCloseTo(result.requests / 0.5, 0);
    expect(result.latency.p99).toBeGreaterThanOrEqual(result.latency.p50);
  });

  it('refuses chunked answers instead of misreading them', async () => {
    const url = await listen((_req, res) => {
      res.write('part one');
      res.end('part two');
    });
    await expect(runLoad({ url, connections: 1, seconds: 0.2, next: () => ({ method: 'GET', path: '/', headers: {} }) })).rejects.toThrow(/chunked/);
  });

  it('stops when the server closes a connection with a request in flight', async () => {
    const url = await listen((req) => req.socket.destroy());
    await expect(runLoad({ url, connections: 2, seconds: 0.2, next: () => ({ method: 'GET', path: '/', headers: {} }) })).rejects.toThrow(/closed a connection/);
  });

  it('reads an answer only once all of its body has arrived', () => {
    const answer = Buffer.from('HTTP/1.1 202 Accepted\r\nContent-Length: 5\r\n\r\nhello');
    expect(parseAnswer(answer.subarray(0, 20))).toBeNull();
    expect(parseAnswer(answer.subarray(0, answer.length - 1))).toBeNull();
    expect(parseAnswer(answer)).toEqual({ status: 202, length: answer.length });
  });
});
