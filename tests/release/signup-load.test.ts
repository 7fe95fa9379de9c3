// Signups under load against the production build: many concurrent connections, 30% of the
// requests repeating an earlier address in other letter case or with surrounding spaces. The
// unique key alone must decide: per address exactly one 201, every repeat 409 (concurrent repeats
// race, so which request wins is not fixed), no 5xx, and the table holds exactly the distinct
// normalised addresses.
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeEmail } from '../../content/email-address.ts';
import type { Store } from '../../server/store/types.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../support/postgres.ts';
import { startTestServer, startTestServerOnPostgres, type TestServer } from '../support/server.ts';
import { allSubscriberRecords } from '../support/store-ops.ts';
import { seededRandom } from '../support/seeded-random.ts';

interface Outcome {
  status: number;
  body: string;
  ms: number;
}


/** Another spelling of the same address: other letter case, surrounding white space, or both. */
function variant(address: string, next: () => number): string {
  const recased = [...address].map((char) => (next() < 0.5 ? char.toUpperCase() : char)).join('');
  // At least the first letter changes case, so the variant never equals the original.
  const cased = recased.charAt(0).toUpperCase() + recased.slice(1);
  const pad = [' ', '  ', '\t', ' \t '][Math.floor(next() * 4)]!;
  switch (Math.floor(next() * 3)) {
    case 0:
      return cased;
    case 1:
      return `${pad}${address}${pad}`;
    default:
      return `${pad}${cased}`;
  }
}

/**
 * `total` raw addresses in sending order, 30% of them repeats of an earlier one. Half the
 * repeats are of one of the last 50 originals, so they are likely in flight at the same time.
 */
function signupRequests(total: number, seed: number): string[] {
  const { next } = seededRandom(seed);
  const repeats = Math.round(total * 0.3);
  const isRepeat = Array.from({ length: total }, (_, i) => i < repeats);
  for (let i = total - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [isRepeat[i], isRepeat[j]] = [isRepeat[j]!, isRepeat[i]!];
  }
  const firstOriginal = isRepeat.indexOf(false);
  [isRepeat[0], isRepeat[firstOriginal]] = [false, true];

  const originals: string[] = [];
  return isRepeat.map((repeat) => {
    if (!repeat) {
      const address = `reader.${originals.length}.${seed}@load${originals.length % 13}.example.com`;
      originals.push(address);
      return address;
    }
    const recent = next() < 0.5;
    const index = recent
      ? Math.max(0, originals.length - 1 - Math.floor(next() * 50))
      : Math.floor(next() * originals.length);
    return variant(originals[index]!, next);
  });
}

function post(agent: Agent, url: URL, body: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends every request over `connections` keep-alive connections; outcomes in request order. */
async function sendAll(baseUrl: string, addresses: string[], connections: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL('/api/subscribe', baseUrl);
  const outcomes: Outcome[] = new Array(addresses.length);
  let cursor = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (cursor < addresses.length) {
        const index = cursor++;
        outcomes[index] = await post(agent, url, JSON.stringify({ email: addresses[index] }));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return { outcomes, seconds };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function storedAddresses(store: Store): Promise<string[]> {
  return (await allSubscriberRecords(store)).map((record) => record.email);
}

async function proveSignupLoad(label: string, server: TestServer, total: number, connections: number, seed: number) {
  const addresses = signupRequests(total, seed);
  const expected = new Set(addresses.map(normalizeEmail));
  const { outcomes, seconds } = await sendAll(server.url, addresses, connections);

  const byStatus = new Map<number, number>();
  for (const outcome of outcomes) byStatus.set(outcome.status, (byStatus.get(outcome.status) ?? 0) + 1);
  const latencies = outcomes.map((outcome) => outcome.ms).sort((a, b) => a - b);

  // Per normalised address: which requests got 201 and 409, and whether a repeat beat the first.
  const perAddress = new Map<string, { created: number[]; duplicate: number[]; first: number }>();
  addresses.forEach((raw, index) => {
    const email = normalizeEmail(raw);
    const entry = perAddress.get(email) ?? { created: [], duplicate: [], first: index };
    if (outcomes[index]!.status === 201) entry.created.push(index);
    if (outcomes[index]!.status === 409) entry.duplicate.push(index);
    perAddress.set(email, entry);
  });
  const repeatWon = [...perAddress.values()].filter((entry) => entry.created.length === 1 && entry.created[0] !== entry.first).length;

  const stored = await storedAddresses(server.store);
  console.log(
    `[signup-load] ${label}: ${total} requests over ${connections} connections in ${seconds.toFixed(1)} s ` +
      `(${(total / seconds).toFixed(0)} req/s, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms); ` +
      `statuses ${JSON.stringify(Object.fromEntries(byStatus))}; ${expected.size} distinct addresses, ${stored.length} rows; ` +
      `${repeatWon} addresses where a concurrent repeat, not the first request, got the 201`,
  );

  expect([...byStatus.keys()].filter((status) => status >= 500)).toEqual([]);
  expect([...byStatus.keys()].sort()).toEqual([201, 409]);
  outcomes.forEach((outcome) => {
    expect(JSON.parse(outcome.body)).toEqual(outcome.status === 201 ? { status: 'subscribed' } : { status: 'already_subscribed' });
  });
  const wrong = [...perAddress.entries()].filter(([, entry]) => entry.created.length !== 1);
  expect(wrong.map(([email, entry]) => `${email}: ${entry.created.length} × 201`)).toEqual([]);
  expect(byStatus.get(201)).toBe(expected.size);
  expect(byStatus.get(409)).toBe(total - expected.size);
  expect(stored.length).toBe(expected.size);
  expect(new Set(stored)).toEqual(expected);
}

describe.skipIf(!postgresUrl)('10,000 signups from 100 connections on PostgreSQL', () => {
  let database: TestDatabase;
  let server: TestServer;
  beforeAll(async () => {
    database = await createTestDatabase();
    server = await startTestServerOnPostgres(database.url, { rateLimitPerMinute: 1e9, signupsPerAddressPerDay: 1e9 });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('stores exactly the distinct normalised addresses: one 201 per address, 409 for every repeat, no 5xx', async () => {
    await proveSignupLoad('PostgreSQL', server, 10_000, 100, 1);
  }, 60_000);
});

describe('1,000 signups from 20 connections on PGlite', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: { rateLimitPerMinute: 1e9, signupsPerAddressPerDay: 1e9 } });
  });
  afterAll(() => server?.close());

  it('stores exactly the distinct normalised addresses: one 201 per address, 409 for every repeat, no 5xx', async () => {
    await proveSignupLoad('PGlite', server, 1_000, 20, 2);
  }, 60_000);
});
