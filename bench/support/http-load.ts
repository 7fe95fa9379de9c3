// A closed-loop HTTP/1.1 load generator for benchmarks whose every request is different (a new
// address per signup). autocannon rebuilds such requests through its own object model and parses
// every answer's headers in JavaScript (http-parser-js): on the bench's 2-core machine that cost
// 116–163 µs of CPU per signup, taken from the same cores the app and PostgreSQL run on. Here each
// connection writes its request as one string and reads the answer's status and Content-Length
// straight from the bytes: what a load generator on another machine would leave to the server.
import { connect, type Socket } from 'node:net';

export interface LoadRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  /** http://host:port of the server. */
  url: string;
  /** Keep-alive connections, each with one request in flight at a time. */
  connections: number;
  seconds: number;
  /** The next request to send; called once per request. */
  next: () => LoadRequest;
}

export interface LoadResult {
  /** Answers completed within the measured time. */
  requests: number;
  /** Answers per second over the measured time. */
  rate: number;
  /** Milliseconds from writing a request to its answer's last byte. */
  latency: { p50: number; p99: number };
  /** How many answers each status code had. */
  statuses: Map<number, number>;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** Reads one HTTP/1.1 answer from `buffer`: its status and total length, or null while it is incomplete. */
export function parseAnswer(buffer: Buffer): { status: number; length: number } | null {
  const headerEnd = buffer.indexOf(HEADER_END);
  if (headerEnd < 0) return null;
  const head = buffer.toString('latin1', 0, headerEnd).toLowerCase();
  if (!head.startsWith('http/1.1 ')) throw new Error(`not an HTTP/1.1 answer: ${JSON.stringify(head.slice(0, 40))}`);
  const status = Number(head.slice(9, 12));
  if (head.includes('\r\ntransfer-encoding:')) throw new Error('the load generator reads answers with a Content-Length, not chunked ones');
  const lengthAt = head.indexOf('\r\ncontent-length:');
  const bodyLength = lengthAt < 0 ? 0 : Number.parseInt(head.slice(lengthAt + 17), 10);
  const length = headerEnd + HEADER_END.length + bodyLength;
  return buffer.length >= length ? { status, length } : null;
}

/** The value at percentile `p` of values sorted ascending (0 when there are none). */
export const percentile = (sorted: ArrayLike<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Runs `connections` callers for `seconds`; an error on any connection ends the run with that error. */
export async function runLoad({ url, connections, seconds, next }: LoadOptions): Promise<LoadResult> {
  const { hostname, port, host } = new URL(url);
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const started = performance.now();
  const deadline = started + seconds * 1000;

  const serialize = ({ method, path, headers, body = '' }: LoadRequest) => {
    let text = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n`;
    for (const name in headers) text += `${name}: ${headers[name]}\r\n`;
    return `${text}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };

  const caller = () =>
    new Promise<void>((resolve, reject) => {
      const socket: Socket = connect({ host: hostname, port: Number(port), noDelay: true });
      let pending: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      let ended = false;
      const fail = (error: Error) => {
        socket.destroy();
        reject(error);
      };
      const send = () => {
        if (performance.now() >= deadline) {
          ended = true;
          socket.end();
          resolve();
          return;
        }
        sentAt = performance.now();
        socket.write(serialize(next()));
      };
      socket.once('connect', send);
      socket.on('data', (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        let answer;
        try {
          answer = parseAnswer(pending);
        } catch (error) {
          fail(error as Error);
          return;
        }
        if (!answer) return;
        if (answer.length !== pending.length) {
          fail(new Error('the server sent bytes after a complete answer'));
          return;
        }
        pending = Buffer.alloc(0);
        const answeredAt = performance.now();
        if (answeredAt <= deadline) {
          latencies.push(answeredAt - sentAt);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        }
        send();
      });
      socket.on('error', fail);
      socket.on('close', () => {
        if (!ended) reject(new Error('the server closed a connection with a request in flight'));
      });
    });

  await Promise.all(Array.from({ length: connections }, caller));
  const sorted = Float64Array.from(latencies).sort();
  return {
    requests: sorted.length,
    rate: sorted.length / ((deadline - started) / 1000),
    latency: { p50: percentile(sorted, 50), p99: percentile(sorted, 99) },
    statuses,
  };
}
