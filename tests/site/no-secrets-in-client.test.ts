// No server secret may reach a reader: not the browser bundle (Vite inlines VITE_* variables,
// and all of import.meta.env if code reads it whole), not a served page. Recognisable fake values
// go into every secret variable, plain and VITE_-prefixed; the client is built into a temp
// directory with them in its environment, and the app serves every page with them in its config.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sitePaths } from '../../server/app.ts';
import { parseConfig } from '../../server/config.ts';
import { ROOT_DIR } from '../../server/site/load-renderer.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const SUPABASE_HOST = 'leakcheck-zzz.supabase.co';
const SECRETS: Record<string, string> = {
  SUPABASE_URL: `https://${SUPABASE_HOST}`,
  SUPABASE_ANON_KEY: 'eyJleakcheckAnonKey.leakcheck-anon-0123456789.signature',
  SUPABASE_SERVICE_ROLE_KEY: 'eyJleakcheckServiceRole.leakcheck-service-0123456789.signature',
  RESEND_API_KEY: 're_LEAKCHECK_resend_0123456789abcdef',
  UNSUBSCRIBE_SECRET: 'leakcheck-unsubscribe-secret-0123456789abcdef',
  // whsec_ then base64 of "LEAKCHECK webhook secret!".
  RESEND_WEBHOOK_SECRET: `whsec_${Buffer.from('LEAKCHECK webhook secret!').toString('base64')}`,
  DATABASE_URL: 'postgres://launched:leakcheck-db-password-0123@db.leakcheck.example:5432/launched',
};
const PREFIXED = Object.fromEntries(Object.entries(SECRETS).map(([name, value]) => [`VITE_${name}`, value]));
const ALL_ENV = { ...SECRETS, ...PREFIXED };

/** Every fake value, and the parts that would give one away on their own. */
const NEEDLES = [
  ...Object.values(SECRETS),
  SUPABASE_HOST,
  'leakcheck-db-password-0123',
  Buffer.from('LEAKCHECK webhook secret!').toString('base64'),
  'LEAKCHECK',
  'leakcheck',
];

function leaksIn(text: string): string[] {
  return NEEDLES.filter((needle) => text.includes(needle));
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

describe('the client bundle built with every secret in the environment', () => {
  let outDir: string;
  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'launched-weekly-leakcheck-'));
  });
  afterAll(() => rm(outDir, { recursive: true, force: true }));

  it('contains none of them, nor the Supabase URL, in any file', async () => {
    const started = performance.now();
    await promisify(execFile)(join(ROOT_DIR, 'node_modules/.bin/vite'), ['build', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'error'], {
      cwd: ROOT_DIR,
      env: { ...process.env, ...ALL_ENV, NODE_ENV: 'production' },
      timeout: 110_000,
    });
    const files = await filesUnder(outDir);
    const leaks: string[] = [];
    let bytes = 0;
    for (const file of files) {
      // latin1 keeps every byte, so a secret inside a binary file is found too.
      const text = await readFile(file, 'latin1');
      bytes += text.length;
      for (const needle of leaksIn(text)) leaks.push(`${file.slice(outDir.length)}: ${needle}`);
    }
    console.log(`[no-secrets] vite build in ${((performance.now() - started) / 1000).toFixed(1)} s: ${files.length} files, ${(bytes / 1024).toFixed(0)} KB searched for ${NEEDLES.length} needles`);
    expect(files.some((file) => file.endsWith('.js'))).toBe(true);
    expect(leaks).toEqual([]);
  }, 120_000);
});

describe('the served site with every secret in its configuration', () => {
  let server: TestServer;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    // The whole parsed configuration, as the server builds it from these variables; the server
    // render also runs with them in process.env.
    const config = await parseConfig({ ...SECRETS, DATABASE_URL: undefined, NODE_ENV: 'test' }, async () => SECRETS.UNSUBSCRIBE_SECRET!);
    expect(config.store.kind).toBe('supabase');
    expect(config.resendWebhookSecret).toBe(SECRETS.RESEND_WEBHOOK_SECRET);
    for (const [name, value] of Object.entries(ALL_ENV)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    const { siteUrl: _siteUrl, env: _env, ...secretConfig } = config;
    server = await startTestServer({ config: secretConfig });
  });
  afterAll(async () => {
    await server?.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('shows none of them on any of the 27 pages, the 404 page, the unsubscribe pages or the feeds', async () => {
    const pages = [...sitePaths()];
    expect(pages).toHaveLength(27);
    const extra = ['/this-page-does-not-exist', '/?signup=subscribed', '/unsubscribe?token=forged.token', '/rss.xml', '/sitemap.xml', '/robots.txt'];
    const leaks: string[] = [];
    for (const path of [...pages, ...extra]) {
      const response = await fetch(server.url + path);
      expect(response.status, path).toBeLessThan(500);
      for (const needle of leaksIn(await response.text())) leaks.push(`${path}: ${needle}`);
    }
    console.log(`[no-secrets] ${pages.length} pages and ${extra.length} other answers searched`);
    expect(leaks).toEqual([]);
  });
});
