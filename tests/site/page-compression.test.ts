// A cached page's first answer does not wait for Brotli at its best quality (130–200 ms a page):
// it goes out gzipped, and Brotli, made on the thread pool meanwhile, answers from then on.
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

function getRaw(url: string, acceptEncoding: string): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  // node:http, not fetch: fetch decompresses on its own and hides the encoding.
  return new Promise((resolve, reject) => {
    httpGet(url, { headers: { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('cached pages and Brotli', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers the first request at once with gzip, then the same page with Brotli', async () => {
    const url = `${server.url}/about`;
    const first = await getRaw(url, 'br, gzip');
    expect(first.headers['content-encoding']).toBe('gzip');
    const html = gunzipSync(first.body).toString();
    expect(html).toContain('</html>');

    let later = await getRaw(url, 'br, gzip');
    for (let tries = 0; later.headers['content-encoding'] !== 'br' && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      later = await getRaw(url, 'br, gzip');
    }
    expect(later.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(later.body).toString()).toBe(html);
    expect(later.headers.etag).toBe(first.headers.etag);
    expect(later.body.length).toBeLessThan(first.body.length);
  });
});
