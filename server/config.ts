// Every environment variable the process reads, parsed once at start-up by one zod schema. A bad
// or missing value stops the process with one line per problem: the variable, what it must be,
// and an example. Nothing else in the code reads process.env.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { validate as isCronExpression } from 'node-cron';
import * as z from 'zod';
import { groupDigits } from '../content/text.ts';
import { lockPathProblem } from './store/owner-lock.ts';

const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();

const urlWith = (protocols: string[], example: string) =>
  optionalText.refine(
    (value) => {
      if (value === undefined) return true;
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a ${protocols.map((protocol) => `${protocol}//`).join(' or ')} URL, e.g. ${example}` },
  );

/**
 * A duration in `unit`s between min and max. The upper bound matters as much as the lower: a timer
 * set past 2^31 - 1 ms (~24.8 days) fires after 1 ms instead (a tight loop), and a lease or a wait
 * longer than the thing it guards silently breaks it; one line names the whole range. The bound is
 * grouped by groupDigits, not toLocaleString: this runs at every start, and ICU's number formats
 * would take resident memory in a server that otherwise never calls into ICU.
 */
const duration = (unit: 'seconds' | 'hours' | 'days', min: number, max: number, fallback: number, options: { int?: boolean } = {}) => {
  const range = `must be a number of ${unit} from ${min} to ${groupDigits(max)}, e.g. ${fallback}`;
  const number = z.coerce.number({ message: range });
  return (options.int ? number.int(range) : number).min(min, range).max(max, range).default(fallback);
};

const milestonesMessage = 'must be whole numbers of referrals from 1 to 10,000, comma-separated, each larger than the one before, e.g. 3,10,25';

/**
 * Counts of a reader's referrals at which they get one thanks e-mail each. Strictly rising, so a
 * typo such as 10,3 is refused at start-up rather than read as a second thanks that never comes.
 */
const referralMilestones = optionalText
  .transform((value, context) => {
    if (value === undefined) return [];
    const parts = value.split(',').map((part) => part.trim());
    const counts = parts.map((part) => (/^[0-9]{1,5}$/.test(part) ? Number(part) : Number.NaN));
    const valid = counts.every((count, index) => Number.isInteger(count) && count >= 1 && count <= 10_000 && (index === 0 || count > counts[index - 1]!));
    if (!valid) {
      context.addIssue({ code: 'custom', message: milestonesMessage });
      return z.NEVER;
    }
    return counts;
  });

const envSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'production', 'test'], { message: 'must be development, production or test, e.g. production' })
    .default('development'),
  PORT: z.coerce.number({ message: 'must be a port number, e.g. 3000' }).int().min(0).max(65535, 'must be a port number, e.g. 3000').default(3000),
  HOST: z.string().trim().min(1, 'must be an address to listen on, e.g. 0.0.0.0').default('0.0.0.0'),
  DATA_DIR: z.string().trim().min(1, 'must be a directory, e.g. ./data').default('./data'),
  SITE_URL: urlWith(['http:', 'https:'], 'https://launchedweekly.com'),
  DATABASE_URL: urlWith(['postgres:', 'postgresql:'], 'postgres://user:password@db.example.com:5432/launched'),
  SUPABASE_URL: urlWith(['https:', 'http:'], 'https://abcd1234.supabase.co'),
  SUPABASE_ANON_KEY: optionalText,
  SUPABASE_SERVICE_ROLE_KEY: optionalText,
  RESEND_API_KEY: optionalText.refine((v) => v === undefined || v.startsWith('re_'), 'must be a Resend API key, e.g. re_123abc…'),
  RESEND_BASE_URL: urlWith(['https:', 'http:'], 'https://api.resend.com'),
  // The part after whsec_ is base64: anything else would only fail at the first webhook.
  RESEND_WEBHOOK_SECRET: optionalText.refine((v) => v === undefined || /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(v), 'must be a Resend webhook signing secret (whsec_ then base64), e.g. whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
  MAIL_FROM: optionalText.refine((v) => v === undefined || /^(?:[^<>@]+<[^<>@\s]+@[^<>@\s]+\.[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+\.[^<>@\s]+)$/.test(v), {
    message: 'must be a sender address, e.g. "Launched Weekly <hello@launchedweekly.com>"',
  }),
  UNSUBSCRIBE_SECRET: optionalText.refine((v) => v === undefined || v.length >= 32, 'must be at least 32 random characters, e.g. the output of `openssl rand -hex 32`'),
  UNSUBSCRIBE_SECRET_PREVIOUS: optionalText.refine((v) => v === undefined || v.length >= 32, 'must be the previous UNSUBSCRIBE_SECRET (at least 32 characters), e.g. the value you are rotating away from'),
  DIGEST_CRON: z
    .string()
    .trim()
    .default('0 9 * * 1')
    .refine((value) => value === 'off' || isCronExpression(value), 'must be a cron expression (minute hour day-of-month month day-of-week) or off, e.g. "0 9 * * 1" for Mondays at 09:00'),
  DIGEST_TZ: z
    .string()
    .trim()
    .default('UTC')
    .refine((tz) => {
      // The default needs no check, and checking would load ICU's zone data into every server (content/publication.ts).
      if (tz === 'UTC') return true;
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: tz });
        return true;
      } catch {
        return false;
      }
    }, 'must be an IANA time zone, e.g. Europe/Lisbon'),
  // A window, not a timer: its bound only keeps the dates computed from it inside a Date's range;
  // tests and back-fills send year-old weeks with a window of thousands of days.
  DIGEST_FRESHNESS_DAYS: duration('days', 1, 100_000, 7, { int: true }),
  // 0 turns catching up off; at most a week, since a tick older than that belongs to another week.
  DIGEST_CATCHUP_HOURS: duration('hours', 0, 168, 6),
  // How long sent outbox rows and webhook events are kept (the Monday job prunes older ones). At
  // least the week the report's outbox section shows; the upper bound keeps the cutoff a date.
  RETENTION_DAYS: duration('days', 7, 100_000, 90, { int: true }),
  TRUST_PROXY: z.coerce.number({ message: 'must be the number of proxies in front of the server, e.g. 1' }).int().min(0).max(10).default(0),
  RATE_LIMIT_PER_MINUTE: z.coerce
    .number({ message: 'must be a whole number of requests, e.g. 10' })
    .int()
    .min(1, 'must be at least 1, e.g. 10')
    .default(10),
  SIGNUP_CONFIRMATION: z
    .enum(['single', 'double'], { message: 'must be single (subscribed at once) or double (confirmed by e-mail first), e.g. double' })
    .default('single'),
  WELCOME_EMAIL: z.enum(['on', 'off'], { message: 'must be on or off, e.g. on' }).default('off'),
  OUTBOX_POLL_SECONDS: duration('seconds', 0.1, 3600, 5),
  // A claim longer than an hour would keep a message from its retries for that long after a crash.
  OUTBOX_LEASE_SECONDS: duration('seconds', 1, 3600, 60, { int: true }),
  // The provider keeps a message's idempotency key for 24 hours from its first try; a message whose
  // try had no answer may be tried again only within them. Six hours at most between tries, plus
  // at most an hour of poll and an hour of lease, leaves every such message at least two more
  // tries on the same key before it would have to be settled unknown.
  OUTBOX_RETRY_MAX_SECONDS: duration('seconds', 0.1, 21_600, 120),
  OPERATOR_EMAIL: optionalText.refine((v) => v === undefined || /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/.test(v), 'must be an e-mail address, e.g. you@example.com'),
  DIGEST_RESUME_FIRST_SECONDS: duration('seconds', 0.1, 86_400, 60),
  DIGEST_RESUME_MAX_SECONDS: duration('seconds', 0.1, 86_400, 1800),
  // Long enough that guessing it is hopeless; compared in constant time (server/metrics/routes/metrics.ts).
  METRICS_TOKEN: optionalText.refine((v) => v === undefined || v.length >= 16, 'must be at least 16 random characters, e.g. the output of `openssl rand -hex 32`'),
  NOTICE_WEBHOOK_URL: urlWith(['https:', 'http:'], 'https://hooks.slack.com/services/T000/B000/XXXX'),
  REFERRAL_MILESTONES: referralMilestones,
  // Renewed every third of it: shorter than a few seconds would turn a slow database answer into a takeover.
  DIGEST_LEASE_SECONDS: duration('seconds', 3, 3600, 60),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { message: 'must be a log level, e.g. info' }).default('info'),
});

type Env = z.infer<typeof envSchema>;

/** Every variable the schema reads, for the check that .env.example documents each one. */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape) as (keyof Env)[];

/**
 * Only the variables the schema reads, with empty values dropped: `PORT=` copied from
 * .env.example means "use the default", not port 0 (which z.coerce would make of '').
 */
function schemaInput(source: Record<string, string | undefined>): Record<string, string> {
  const input: Record<string, string> = {};
  for (const name of CONFIG_VARIABLES) {
    const value = source[name];
    if (value !== undefined && value.trim() !== '') input[name] = value;
  }
  return input;
}

export type StoreConfig =
  | { kind: 'pglite'; dataDir: string }
  | { kind: 'postgres'; url: string }
  | { kind: 'supabase'; url: string; anonKey: string; serviceRoleKey: string };

export type MailerConfig = { kind: 'resend'; apiKey: string; baseUrl?: string; from: string } | { kind: 'outbox'; dir: string; from: string };

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  dataDir: string;
  siteUrl: string;
  store: StoreConfig;
  mailer: MailerConfig;
  unsubscribeSecret: string;
  /** The secret before the last rotation: links signed with it still unsubscribe. */
  unsubscribeSecretPrevious?: string;
  resendWebhookSecret?: string;
  digest: {
    cron: string | 'off';
    timezone: string;
    freshnessDays: number;
    /** DIGEST_RESUME_FIRST_SECONDS / _MAX_SECONDS: when a stopped scheduled run is tried again. */
    resumeFirstSeconds: number;
    resumeMaxSeconds: number;
    /** DIGEST_LEASE_SECONDS: how long a stopped server keeps its tick and its recap's sending lease. */
    leaseSeconds: number;
    /** DIGEST_CATCHUP_HOURS: how old a missed tick may be and still be run when a server is back (0: never). */
    catchUpHours: number;
    /** RETENTION_DAYS: closed outbox messages and webhook events older than this are pruned by the daily housekeeping. */
    retentionDays: number;
  };
  /** OUTBOX_*: how the outbox of confirmation, welcome and operator e-mails is delivered. */
  outbox: { pollSeconds: number; leaseSeconds: number; retryMaxSeconds: number };
  /** OPERATOR_EMAIL: where the operator's notices go (none when unset: the log says the same). */
  operatorEmail?: string;
  /** METRICS_TOKEN: GET /metrics answers to this bearer token; unset, there is no such endpoint. */
  metricsToken?: string;
  /** NOTICE_WEBHOOK_URL: every operator notice is also posted here as {"text": …}. */
  noticeWebhookUrl?: string;
  /** REFERRAL_MILESTONES: rising referral counts that each earn the referrer one thanks e-mail (none when empty). */
  referralMilestones: number[];
  trustProxy: number;
  /** Signup posts allowed per client network address per minute (shared by replicas; never unsubscribes). */
  rateLimitPerMinute: number;
  /** SIGNUP_CONFIRMATION: `double` keeps a signup pending until its owner confirms by e-mail. */
  signupConfirmation: 'single' | 'double';
  /** WELCOME_EMAIL: one welcome e-mail per address, when it becomes active. */
  welcomeEmail: boolean;
  logLevel: Env['LOG_LEVEL'];
  /** Which development defaults were filled in, for the one start-up line that says so. */
  defaultsUsed: string[];
  /** What runs but not as the operator may expect: logged at warn level once at start-up. */
  warnings: string[];
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Configuration is invalid:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export const DEFAULT_MAIL_FROM = 'Launched Weekly <digest@localhost>';

/**
 * Parses the environment. `loadSecret` supplies the development unsubscribe secret (generated
 * once into DATA_DIR so links keep working across restarts); tests pass their own.
 */
export async function parseConfig(
  source: Record<string, string | undefined>,
  loadSecret: (dataDir: string) => Promise<string> = loadOrCreateDevSecret,
): Promise<Config> {
  const parsed = envSchema.safeParse(schemaInput(source));
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`));
  }
  const env = parsed.data;
  const production = env.NODE_ENV === 'production';
  const problems: string[] = [];
  const defaultsUsed: string[] = [];
  const dataDir = resolve(env.DATA_DIR);

  const supabaseVars = [env.SUPABASE_URL, env.SUPABASE_ANON_KEY, env.SUPABASE_SERVICE_ROLE_KEY];
  const supabaseSet = supabaseVars.filter((v) => v !== undefined).length;
  if (supabaseSet > 0 && supabaseSet < 3) {
    problems.push('SUPABASE_URL, SUPABASE_ANON_KEY, SUPABASE_SERVICE_ROLE_KEY: set all three or none, e.g. SUPABASE_URL=https://abcd1234.supabase.co with both keys from the project’s API settings');
  }
  if (supabaseSet === 3 && env.DATABASE_URL) {
    problems.push('DATABASE_URL: set either DATABASE_URL or the SUPABASE_* variables, not both');
  }

  let store: StoreConfig = { kind: 'pglite', dataDir };
  if (env.DATABASE_URL) store = { kind: 'postgres', url: env.DATABASE_URL };
  else if (supabaseSet === 3) {
    store = { kind: 'supabase', url: env.SUPABASE_URL!, anonKey: env.SUPABASE_ANON_KEY!, serviceRoleKey: env.SUPABASE_SERVICE_ROLE_KEY! };
  }
  if (store.kind === 'pglite') {
    const tooLong = lockPathProblem(dataDir);
    if (tooLong) problems.push(`DATA_DIR: ${tooLong}`);
  }

  if (production) {
    if (!env.SITE_URL) problems.push('SITE_URL: required in production: the public address of the site, e.g. https://launchedweekly.com');
    if (!env.UNSUBSCRIBE_SECRET) problems.push('UNSUBSCRIBE_SECRET: required in production: at least 32 random characters, e.g. the output of `openssl rand -hex 32`');
    if (!env.MAIL_FROM) problems.push('MAIL_FROM: required in production: the sender, e.g. "Launched Weekly <hello@launchedweekly.com>"');
    if (!env.RESEND_API_KEY) problems.push('RESEND_API_KEY: required in production: a Resend API key, e.g. re_123abc…');
    if (store.kind === 'pglite' && supabaseSet === 0) {
      problems.push('DATABASE_URL: required in production (or the three SUPABASE_* variables): the embedded database is for development, e.g. postgres://user:password@db.example.com:5432/launched');
    }
  }
  if (env.UNSUBSCRIBE_SECRET_PREVIOUS && env.UNSUBSCRIBE_SECRET_PREVIOUS === env.UNSUBSCRIBE_SECRET) {
    problems.push('UNSUBSCRIBE_SECRET_PREVIOUS: must differ from UNSUBSCRIBE_SECRET: it is the secret you rotated away from, e.g. the old value');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const warnings: string[] = [];
  const siteUrl = siteOrigin(env.SITE_URL, env.PORT, warnings);
  if (!env.SITE_URL) defaultsUsed.push(`SITE_URL=${siteUrl}`);
  if (production && !env.RESEND_WEBHOOK_SECRET) {
    warnings.push(
      'RESEND_WEBHOOK_SECRET is not set: bounces and complaints will not be processed, so the digest keeps going to addresses that bounce or report it as spam. Add the webhook in Resend (docs/operating.md, "Deploy with Supabase and Resend") and set its signing secret.',
    );
  }
  if (store.kind === 'pglite') defaultsUsed.push(`embedded database in ${join(dataDir, 'db')}`);

  let unsubscribeSecret = env.UNSUBSCRIBE_SECRET;
  if (!unsubscribeSecret) {
    unsubscribeSecret = await loadSecret(dataDir);
    defaultsUsed.push(`UNSUBSCRIBE_SECRET from ${join(dataDir, 'unsubscribe-secret')}`);
  }

  const from = env.MAIL_FROM ?? DEFAULT_MAIL_FROM;
  const mailer: MailerConfig = env.RESEND_API_KEY
    ? { kind: 'resend', apiKey: env.RESEND_API_KEY, baseUrl: env.RESEND_BASE_URL, from }
    : { kind: 'outbox', dir: join(dataDir, 'outbox'), from };
  if (mailer.kind === 'outbox') defaultsUsed.push(`e-mail written to ${mailer.dir}`);

  return {
    env: env.NODE_ENV,
    port: env.PORT,
    host: env.HOST,
    dataDir,
    siteUrl,
    store,
    mailer,
    unsubscribeSecret,
    unsubscribeSecretPrevious: env.UNSUBSCRIBE_SECRET_PREVIOUS,
    resendWebhookSecret: env.RESEND_WEBHOOK_SECRET,
    digest: {
      cron: env.DIGEST_CRON === 'off' ? 'off' : env.DIGEST_CRON,
      timezone: env.DIGEST_TZ,
      freshnessDays: env.DIGEST_FRESHNESS_DAYS,
      resumeFirstSeconds: env.DIGEST_RESUME_FIRST_SECONDS,
      resumeMaxSeconds: env.DIGEST_RESUME_MAX_SECONDS,
      leaseSeconds: env.DIGEST_LEASE_SECONDS,
      catchUpHours: env.DIGEST_CATCHUP_HOURS,
      retentionDays: env.RETENTION_DAYS,
    },
    outbox: { pollSeconds: env.OUTBOX_POLL_SECONDS, leaseSeconds: env.OUTBOX_LEASE_SECONDS, retryMaxSeconds: env.OUTBOX_RETRY_MAX_SECONDS },
    operatorEmail: env.OPERATOR_EMAIL,
    metricsToken: env.METRICS_TOKEN,
    noticeWebhookUrl: env.NOTICE_WEBHOOK_URL,
    referralMilestones: env.REFERRAL_MILESTONES,
    trustProxy: env.TRUST_PROXY,
    rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
    signupConfirmation: env.SIGNUP_CONFIRMATION,
    welcomeEmail: env.WELCOME_EMAIL === 'on',
    logLevel: env.LOG_LEVEL,
    defaultsUsed,
    warnings,
  };
}

/**
 * SITE_URL as its origin (scheme, host, port) and nothing else: every absolute link, feed entry
 * and List-Unsubscribe header is built by appending a path to it, so a stray path, query or
 * fragment (or a tab or newline, which the URL parser drops) must never be carried into them.
 */
function siteOrigin(value: string | undefined, port: number, warnings: string[]): string {
  if (value === undefined) return `http://localhost:${port}`;
  const url = new URL(value);
  const rest = `${url.pathname === '/' ? '' : url.pathname}${url.search}${url.hash}`;
  if (rest !== '' || url.username !== '' || url.password !== '') {
    // The value itself is not repeated: it might hold credentials.
    warnings.push(`SITE_URL: only its origin ${url.origin} is used for links; its path, query, fragment or credentials are ignored (the site is served from the root of its host).`);
  }
  return url.origin;
}

/** Development only: a random secret created on first start and kept in DATA_DIR. */
export async function loadOrCreateDevSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, 'unsubscribe-secret');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= 32) return existing;
  } catch {
    // Not created yet.
  }
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
