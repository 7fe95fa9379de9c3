// HTTP requests sent from a chosen loopback address (127.0.0.0/8 is all local on Linux), so a test
// plays several network clients without trusting a proxy header: the server sees the real source.
import { Agent, request } from 'node:http';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function agentFrom(localAddress: string, options: { keepAlive?: boolean } = {}): Agent {
  return new Agent({ keepAlive: options.keepAlive ?? true, maxSockets: 8, localAddress });
}

export function send(agent: Agent, url: string, init: { method: string; headers?: Record<string, string>; body?: string }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method: init.method, headers: init.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Runs `work` over `items` with at most `concurrency` in flight; results in the items' order. */
export async function inParallel<T, R>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
      }
    }),
  );
  return results;
}
