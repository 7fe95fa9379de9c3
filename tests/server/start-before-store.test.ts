// The server listens while its store is still opening: pages need no database, so a restart serves
// them while the embedded database boots or the pool connects, and a request that needs the store
// waits for the open instead of failing. Checked on the built server (`dist/bin/server.js`, as
// `npm start` runs it) with PostgreSQL behind a gate that holds every connection until the test
// lets it through: a page answered while the gate is shut was served without the database.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../support/postgres.ts';

const ROOT = new URL('../..', import.meta.url);

/** A TCP gate in front of PostgreSQL: connections wait, unanswered, until `open()`. */
async function gateTo(target: URL): Promise<{ port: number; open(): void; close(): Promise<void> }> {
  const waiting: Socket[] = [];
  const sockets = new Set<Socket>();
  let isOpen = false;
  const pass = (client: Socket) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => (client.destroy(), upstream.destroy());
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  };
  const server: Server = createServer((client) => {
    sockets.add(client);
    if (isOpen) pass(client);
    else waiting.push(client);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    open() {
      isOpen = true;
      for (const client of waiting.splice(0)) pass(client);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(!postgresUrl)('a server whose store is still opening', () => {
  let db: TestDatabase;
  let gate: Awaited<ReturnType<typeof gateTo>>;
  let child: ChildProcess;
  let output = '';
  let base: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    gate = await gateTo(new URL(db.url));
    const gated = new URL(db.url);
    gated.port = String(gate.port);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['dist/bin/server.js'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, NODE_ENV: 'development', HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: gated.toString(), DIGEST_CRON: 'off', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await gate?.close();
    await db?.drop();
  });

  it('serves pages before it can reach the database, and a signup sent meanwhile is stored once it can', async () => {
    let page: Response | null = null;
    for (let attempt = 0; attempt < 600 && !page; attempt++) {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}):\n${output}`);
      page = await fetch(`${base}/`).catch(() => null);
      if (!page) await delay(20);
    }
    // The gate is still shut: the page came without the database, and the server does not yet
    // announce itself as ready.
    expect(page?.status).toBe(200);
    expect(await page!.text()).toContain('Launched Weekly');
    expect(output).not.toContain('Launched Weekly on http:');

    const signup = fetch(`${base}/api/subscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'early.reader@example.com' }),
    });
    gate.open();
    const answered = await signup;
    expect(answered.status).toBe(201);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const rows = await client.query<{ email: string; status: string }>('select email, status from public.email_signups');
      expect(rows.rows).toEqual([{ email: 'early.reader@example.com', status: 'active' }]);
    } finally {
      await client.end();
    }
    await expect.poll(() => output).toContain('Launched Weekly on http:');
  });
});
