// Every way the environment can be wrong, as the operator sees it: one line per problem naming the
// variable, what it must be and an example; and the process itself refusing to start in
// production without its requirements, with those lines and no stack trace.
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, parseConfig, type Config } from '../../server/config.ts';

const DEV_SECRET = 'generated-development-secret-0123456789abcdef';
const parse = (env: Record<string, string | undefined>) => parseConfig(env, async () => DEV_SECRET);

async function problemsOf(env: Record<string, string | undefined>): Promise<string[]> {
  try {
    await parse(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

const PRODUCTION: Record<string, string> = {
  NODE_ENV: 'production',
  SITE_URL: 'https://launchedweekly.com/',
  UNSUBSCRIBE_SECRET: 'a'.repeat(64),
  MAIL_FROM: 'Launched Weekly <digest@launchedweekly.com>',
  RESEND_API_KEY: 're_live_123',
  DATABASE_URL: 'postgres://app:pw@db.example.com:5432/launched',
};

describe('one line per bad value: variable, what it must be, an example', () => {
  // [variable, bad value, what the line must say]
  const cases: [string, string, RegExp][] = [
    ['NODE_ENV', 'staging', /^NODE_ENV: must be development, production or test, e\.g\. production$/],
    ['PORT', 'eighty', /^PORT: must be a port number, e\.g\. 3000$/],
    ['PORT', '-1', /^PORT: must be a port number, e\.g\. 3000$/],
    ['PORT', '65536', /^PORT: must be a port number, e\.g\. 3000$/],
    ['PORT', '80.5', /^PORT: must be a port number, e\.g\. 3000$/],
    ['SITE_URL', 'launchedweekly.com', /^SITE_URL: must be a http:\/\/ or https:\/\/ URL, e\.g\. https:\/\/launchedweekly\.com$/],
    ['SITE_URL', 'ftp://launchedweekly.com', /^SITE_URL: must be a http:\/\/ or https:\/\/ URL/],
    ['DATABASE_URL', 'mysql://db/launched', /^DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL, e\.g\. postgres:\/\/user:password@/],
    ['SUPABASE_URL', 'abcd1234.supabase.co', /^SUPABASE_URL: must be a https:\/\/ or http:\/\/ URL, e\.g\. https:\/\/abcd1234\.supabase\.co$/],
    ['RESEND_API_KEY', 'sk_123', /^RESEND_API_KEY: must be a Resend API key, e\.g\. re_/],
    ['RESEND_BASE_URL', 'api.resend.com', /^RESEND_BASE_URL: must be a https:\/\/ or http:\/\/ URL, e\.g\. https:\/\/api\.resend\.com$/],
    ['RESEND_WEBHOOK_SECRET', 'secret', /^RESEND_WEBHOOK_SECRET: must be a Resend webhook signing secret \(whsec_ then base64\), e\.g\. whsec_\w+$/],
    ['RESEND_WEBHOOK_SECRET', 'whsec_not base64!', /^RESEND_WEBHOOK_SECRET: must be a Resend webhook signing secret/],
    ['MAIL_FROM', 'digest at example', /^MAIL_FROM: must be a sender address, e\.g\. "Launched Weekly <hello@launchedweekly\.com>"$/],
    ['MAIL_FROM', 'Launched Weekly <digest>', /^MAIL_FROM: must be a sender address/],
    ['UNSUBSCRIBE_SECRET', 'too-short', /^UNSUBSCRIBE_SECRET: must be at least 32 random characters, e\.g\. the output of `openssl rand -hex 32`$/],
    ['DIGEST_CRON', 'every monday', /^DIGEST_CRON: must be a cron expression .* or off, e\.g\. "0 9 \* \* 1" for Mondays at 09:00$/],
    ['DIGEST_CRON', '0 25 * * 1', /^DIGEST_CRON: must be a cron expression/],
    ['DIGEST_TZ', 'Mars/Olympus_Mons', /^DIGEST_TZ: must be an IANA time zone, e\.g\. Europe\/Lisbon$/],
    ['DIGEST_FRESHNESS_DAYS', '0', /^DIGEST_FRESHNESS_DAYS: must be a number of days from 1 to 100,000, e\.g\. 7$/],
    ['DIGEST_FRESHNESS_DAYS', 'a week', /^DIGEST_FRESHNESS_DAYS: must be a number of days from 1 to 100,000, e\.g\. 7$/],
    ['DIGEST_FRESHNESS_DAYS', '100001', /^DIGEST_FRESHNESS_DAYS: must be a number of days from 1 to 100,000/],
    ['DIGEST_FRESHNESS_DAYS', '1.5', /^DIGEST_FRESHNESS_DAYS: must be a number of days from 1 to 100,000/],
    // Every duration has an upper bound: past 2^31 - 1 ms a timer fires at once, and a lease longer than a day fails every message.
    ['DIGEST_CATCHUP_HOURS', '200', /^DIGEST_CATCHUP_HOURS: must be a number of hours from 0 to 168, e\.g\. 6$/],
    ['DIGEST_CATCHUP_HOURS', '-1', /^DIGEST_CATCHUP_HOURS: must be a number of hours from 0 to 168/],
    ['OUTBOX_POLL_SECONDS', '3000000', /^OUTBOX_POLL_SECONDS: must be a number of seconds from 0\.1 to 3,600, e\.g\. 5$/],
    ['OUTBOX_POLL_SECONDS', '0', /^OUTBOX_POLL_SECONDS: must be a number of seconds from 0\.1 to 3,600/],
    ['OUTBOX_LEASE_SECONDS', '90000', /^OUTBOX_LEASE_SECONDS: must be a number of seconds from 1 to 3,600, e\.g\. 60$/],
    ['OUTBOX_RETRY_MAX_SECONDS', '3000000', /^OUTBOX_RETRY_MAX_SECONDS: must be a number of seconds from 0\.1 to 21,600, e\.g\. 120$/],
    // A wait of a day would outlast the provider's memory of the key a message is retried under.
    ['OUTBOX_RETRY_MAX_SECONDS', '86400', /^OUTBOX_RETRY_MAX_SECONDS: must be a number of seconds from 0\.1 to 21,600, e\.g\. 120$/],
    ['DIGEST_RESUME_FIRST_SECONDS', '86401', /^DIGEST_RESUME_FIRST_SECONDS: must be a number of seconds from 0\.1 to 86,400, e\.g\. 60$/],
    ['DIGEST_RESUME_MAX_SECONDS', '2147484', /^DIGEST_RESUME_MAX_SECONDS: must be a number of seconds from 0\.1 to 86,400, e\.g\. 1800$/],
    // At least the week the report's outbox section reads, so a prune never changes it.
    ['RETENTION_DAYS', '6', /^RETENTION_DAYS: must be a number of days from 7 to 100,000, e\.g\. 90$/],
    ['RETENTION_DAYS', '100001', /^RETENTION_DAYS: must be a number of days from 7 to 100,000, e\.g\. 90$/],
    ['RETENTION_DAYS', '30.5', /^RETENTION_DAYS: must be a number of days from 7 to 100,000/],
    ['TRUST_PROXY', 'true', /^TRUST_PROXY: must be the number of proxies in front of the server, e\.g\. 1$/],
    ['TRUST_PROXY', '-1', /^TRUST_PROXY: must be the number of proxies/],
    ['TRUST_PROXY', '11', /^TRUST_PROXY: must be the number of proxies/],
    ['RATE_LIMIT_PER_MINUTE', '0', /^RATE_LIMIT_PER_MINUTE: must be at least 1, e\.g\. 10$/],
    ['RATE_LIMIT_PER_MINUTE', 'lots', /^RATE_LIMIT_PER_MINUTE: must be a whole number of requests, e\.g\. 10$/],
    // Rising whole counts only: 10,3 would promise a second thanks that could never come.
    ['REFERRAL_MILESTONES', '10,3', /^REFERRAL_MILESTONES: must be whole numbers of referrals from 1 to 10,000, comma-separated, each larger than the one before, e\.g\. 3,10,25$/],
    ['REFERRAL_MILESTONES', '3,3', /^REFERRAL_MILESTONES: must be whole numbers of referrals/],
    ['REFERRAL_MILESTONES', '0,5', /^REFERRAL_MILESTONES: must be whole numbers of referrals/],
    ['REFERRAL_MILESTONES', '2.5', /^REFERRAL_MILESTONES: must be whole numbers of referrals/],
    ['REFERRAL_MILESTONES', '3,,10', /^REFERRAL_MILESTONES: must be whole numbers of referrals/],
    ['REFERRAL_MILESTONES', 'three', /^REFERRAL_MILESTONES: must be whole numbers of referrals/],
    ['REFERRAL_MILESTONES', '10001', /^REFERRAL_MILESTONES: must be whole numbers of referrals/],
    ['LOG_LEVEL', 'verbose', /^LOG_LEVEL: must be a log level, e\.g\. info$/],
  ];

  it.each(cases)('%s=%s', async (name, value, expected) => {
    const problems = await problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(expected);
  });

  it('lists every bad variable at once, each on its own line, rather than stopping at the first', async () => {
    const problems = await problemsOf({ PORT: 'x', LOG_LEVEL: 'loud', DIGEST_TZ: 'Nowhere', MAIL_FROM: 'nobody' });
    expect(problems.map((line) => line.split(':')[0]).sort()).toEqual(['DIGEST_TZ', 'LOG_LEVEL', 'MAIL_FROM', 'PORT']);
    const error = await parse({ PORT: 'x', LOG_LEVEL: 'loud' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message.split('\n')).toEqual(['Configuration is invalid:', expect.stringMatching(/^ {2}PORT: /), expect.stringMatching(/^ {2}LOG_LEVEL: /)]);
  });

  it('a Supabase set-up needs all three variables, and not DATABASE_URL as well', async () => {
    expect(await problemsOf({ SUPABASE_URL: 'https://abcd1234.supabase.co', SUPABASE_ANON_KEY: 'anon' })).toEqual([
      expect.stringMatching(/^SUPABASE_URL, SUPABASE_ANON_KEY, SUPABASE_SERVICE_ROLE_KEY: set all three or none, e\.g\. SUPABASE_URL=https:/),
    ]);
    const both = await problemsOf({
      SUPABASE_URL: 'https://abcd1234.supabase.co',
      SUPABASE_ANON_KEY: 'anon',
      SUPABASE_SERVICE_ROLE_KEY: 'service',
      DATABASE_URL: 'postgres://db/launched',
    });
    expect(both).toEqual([expect.stringMatching(/^DATABASE_URL: set either DATABASE_URL or the SUPABASE_\* variables, not both$/)]);
  });
});

describe('production requirements', () => {
  it('an empty production environment names all five missing requirements, one line each', async () => {
    const problems = await problemsOf({ NODE_ENV: 'production' });
    expect(problems).toEqual([
      'SITE_URL: required in production: the public address of the site, e.g. https://launchedweekly.com',
      'UNSUBSCRIBE_SECRET: required in production: at least 32 random characters, e.g. the output of `openssl rand -hex 32`',
      'MAIL_FROM: required in production: the sender, e.g. "Launched Weekly <hello@launchedweekly.com>"',
      'RESEND_API_KEY: required in production: a Resend API key, e.g. re_123abc…',
      'DATABASE_URL: required in production (or the three SUPABASE_* variables): the embedded database is for development, e.g. postgres://user:password@db.example.com:5432/launched',
    ]);
  });

  it.each(['SITE_URL', 'UNSUBSCRIBE_SECRET', 'MAIL_FROM', 'RESEND_API_KEY', 'DATABASE_URL'])('without %s alone, only that line', async (name) => {
    const problems = await problemsOf({ ...PRODUCTION, [name]: undefined });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}: required in production`));
  });

  it('an empty value counts as missing, as when .env.example is copied unfilled', async () => {
    expect(await problemsOf({ ...PRODUCTION, SITE_URL: '', UNSUBSCRIBE_SECRET: '   ' })).toEqual([
      expect.stringMatching(/^SITE_URL: required in production/),
      expect.stringMatching(/^UNSUBSCRIBE_SECRET: required in production/),
    ]);
  });

  it('accepts a complete production environment with no development default in use', async () => {
    const config: Config = await parse(PRODUCTION);
    expect(config).toMatchObject({
      env: 'production',
      siteUrl: 'https://launchedweekly.com',
      store: { kind: 'postgres', url: PRODUCTION.DATABASE_URL },
      mailer: { kind: 'resend', apiKey: 're_live_123', from: PRODUCTION.MAIL_FROM },
      unsubscribeSecret: PRODUCTION.UNSUBSCRIBE_SECRET,
      defaultsUsed: [],
    });
  });

  it('the three SUPABASE_* variables are a real store in production', async () => {
    const config = await parse({
      ...PRODUCTION,
      DATABASE_URL: undefined,
      SUPABASE_URL: 'https://abcd1234.supabase.co',
      SUPABASE_ANON_KEY: 'anon',
      SUPABASE_SERVICE_ROLE_KEY: 'service',
    });
    expect(config.store).toEqual({ kind: 'supabase', url: 'https://abcd1234.supabase.co', anonKey: 'anon', serviceRoleKey: 'service' });
  });
});

describe('development defaults', () => {
  it('an empty environment starts on the embedded defaults and says which it used', async () => {
    const config = await parse({});
    expect(config).toMatchObject({
      env: 'development',
      port: 3000,
      host: '0.0.0.0',
      siteUrl: 'http://localhost:3000',
      store: { kind: 'pglite' },
      mailer: { kind: 'outbox' },
      unsubscribeSecret: DEV_SECRET,
      digest: { cron: '0 9 * * 1', timezone: 'UTC', freshnessDays: 7 },
      trustProxy: 0,
      rateLimitPerMinute: 10,
      logLevel: 'info',
    });
    expect(config.defaultsUsed.join('\n')).toMatch(/SITE_URL=http:\/\/localhost:3000/);
    expect(config.defaultsUsed.join('\n')).toMatch(/embedded database/);
    expect(config.defaultsUsed.join('\n')).toMatch(/UNSUBSCRIBE_SECRET from/);
  });

  it('empty values take the default (PORT= is port 3000, not a random port)', async () => {
    const config = await parse({ PORT: '', DIGEST_CRON: '', LOG_LEVEL: '', TRUST_PROXY: '', RATE_LIMIT_PER_MINUTE: ' ' });
    expect(config).toMatchObject({ port: 3000, digest: { cron: '0 9 * * 1' }, logLevel: 'info', trustProxy: 0, rateLimitPerMinute: 10 });
  });

  it('DIGEST_CRON=off turns the in-process schedule off; TRUST_PROXY and the limit are numbers', async () => {
    const config = await parse({ DIGEST_CRON: 'off', TRUST_PROXY: '2', RATE_LIMIT_PER_MINUTE: '30', PORT: '0' });
    expect(config).toMatchObject({ digest: { cron: 'off' }, trustProxy: 2, rateLimitPerMinute: 30, port: 0 });
  });

  it('REFERRAL_MILESTONES is a rising list of counts, spaces allowed; unset or empty is no milestones', async () => {
    expect((await parse({ REFERRAL_MILESTONES: ' 3, 10 ,25 ' })).referralMilestones).toEqual([3, 10, 25]);
    expect((await parse({ REFERRAL_MILESTONES: '1' })).referralMilestones).toEqual([1]);
    expect((await parse({ REFERRAL_MILESTONES: '' })).referralMilestones).toEqual([]);
    expect((await parse({})).referralMilestones).toEqual([]);
  });
});

describe('.env.example', () => {
  const documented = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);

  it('documents every variable the configuration reads, and nothing it does not', () => {
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it('parses as a valid development configuration as it stands', async () => {
    const text = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const env: Record<string, string> = {};
    for (const line of text.split('\n')) {
      const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
      if (match) env[match[1]!] = match[2]!.replace(/^"(.*)"$/, '$1');
    }
    const config = await parse(env);
    expect(config.env).toBe('development');
    expect(config.store.kind).toBe('pglite');
  });
});

describe('the process', () => {
  it('refuses to start in production with an empty environment: exit 1, one line per problem, no stack trace', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
      cwd: new URL('../..', import.meta.url),
      env: { NODE_ENV: 'production' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    const output = `${result.stdout}${result.stderr}`;
    const lines = output.trim().split('\n');
    expect(lines[0]).toBe('Launched Weekly cannot start. Fix these environment variables:');
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^ {2}- SITE_URL: required in production: .* e\.g\. https:\/\/launchedweekly\.com$/),
      expect.stringMatching(/^ {2}- UNSUBSCRIBE_SECRET: required in production: .* e\.g\. /),
      expect.stringMatching(/^ {2}- MAIL_FROM: required in production: .* e\.g\. /),
      expect.stringMatching(/^ {2}- RESEND_API_KEY: required in production: .* e\.g\. re_/),
      expect.stringMatching(/^ {2}- DATABASE_URL: required in production .* e\.g\. postgres:\/\//),
    ]);
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toMatch(/ConfigError|Error:/);
  });

  it('refuses an outbox poll of 3,000,000 s and a lease of 90,000 s at start: exit 1, one line each naming the range', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
      cwd: new URL('../..', import.meta.url),
      env: { NODE_ENV: 'test', DATA_DIR: tmpdir(), OUTBOX_POLL_SECONDS: '3000000', OUTBOX_LEASE_SECONDS: '90000' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    const output = `${result.stdout}${result.stderr}`;
    expect(output.trim().split('\n').slice(1)).toEqual([
      '  - OUTBOX_POLL_SECONDS: must be a number of seconds from 0.1 to 3,600, e.g. 5',
      '  - OUTBOX_LEASE_SECONDS: must be a number of seconds from 1 to 3,600, e.g. 60',
    ]);
    expect(output).not.toMatch(/^\s+at /m);
  });

  it('names the store and the variable to check, in one line and no stack trace, when the database is unreachable', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
      cwd: new URL('../..', import.meta.url),
      // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
      env: { NODE_ENV: 'development', DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:9/none', DIGEST_CRON: 'off', PORT: '0', DATA_DIR: tmpdir() },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    const output = `${result.stdout}${result.stderr}`;
    expect(output).toMatch(/Cannot open the postgres store: .*Check DATABASE_URL and that the database is reachable\./);
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toContain('secret@');
  });
});
