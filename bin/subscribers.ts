// npm run subscribers -- count | export [--out FILE] | import FILE
// The operator's view of the list, on whichever store the environment configures (embedded,
// DATABASE_URL or Supabase). On the embedded store the running server owns the database, and this
// command says so instead of opening it beside the server.
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { emailProblem } from '../content/email-address.ts';
import { ConfigError, parseConfig } from '../server/config.ts';
import { canonicalAddress } from '../server/subscribers/mailbox-key.ts';
import { openStore } from '../server/store/index.ts';
import type { ImportState } from '../server/store/subscriber-import.ts';
import { StoreLockedError, StoreUnavailableError, type Store, type SubscribersCliStore } from '../server/store/types.ts';
import { IMPORT_CHUNK_SIZE, importSubscriberRows, type ImportFileRow } from '../server/subscribers/import-in-chunks.ts';
import { storedMailboxKey, subscriberKeys, type SubscriberKeys } from '../server/subscribers/subscriber-keys.ts';

const USAGE = `Usage: npm run subscribers -- <command>

Commands:
  count               how many subscribers are active, and how many left
  export [--out FILE] every subscriber as CSV (email,status,reason,created_at), to FILE or standard
                      output; status is active, pending, unsubscribed, bounced or complained
  import FILE         add the addresses in a CSV file whose header row has an email column
                      ("email", "email address" or "e-mail", in any case; other columns are ignored).
                      Addresses already on the list keep their state (unless the file says
                      they unsubscribed, bounced or complained), and an import never
                      reactivates a suppressed address: someone who unsubscribed, bounced or
                      complained (or whose data was deleted after a bounce or complaint) is not
                      signed up again. A status column (as in an export: unsubscribed, bounced,
                      complained, pending, or "left") is kept, so export then import round-trips.
                      Each row reaches its final state in one statement, ${IMPORT_CHUNK_SIZE} rows per
                      transaction: an interrupted import leaves everyone as they were or as the
                      file says, and running it again finishes it. Sends no e-mail.

The store is the one the server uses: DATABASE_URL, the SUPABASE_* variables, or the embedded
database in DATA_DIR (stop the server first: only one process may open it).`;

const PAGE_SIZE = 1000;
const EMAIL_HEADERS = new Set(['email', 'email address', 'e-mail', 'e-mail address', 'email_address']);
// What a status (or reason) cell may say, and the state it stands for. "left" is older exports'.
const IMPORT_STATES: Record<string, ImportState> = {
  active: 'active',
  pending: 'pending',
  left: 'unsubscribed',
  unsubscribed: 'unsubscribed',
  bounced: 'bounced',
  complained: 'complained',
};

class UsageError extends Error {}

type Command = { name: 'count' } | { name: 'export'; out: string | null } | { name: 'import'; file: string };

function parseCommand(argv: string[]): Command | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: { out: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  const [name, ...rest] = positionals;
  if (name === undefined) throw new UsageError('Name a command: count, export or import.');
  if (name !== 'export' && values.out !== undefined) throw new UsageError(`--out belongs to export, not to ${name}.`);
  switch (name) {
    case 'count':
      if (rest.length > 0) throw new UsageError(`count takes no arguments (got ${rest.join(' ')}).`);
      return { name };
    case 'export':
      if (rest.length > 0) throw new UsageError(`export takes no file name; write to one with --out ${rest[0]}.`);
      return { name, out: values.out ?? null };
    case 'import':
      if (rest.length !== 1) throw new UsageError('import takes exactly one CSV file.');
      return { name, file: rest[0]! };
    default:
      throw new UsageError(`Unknown command "${name}".`);
  }
}

async function count(store: SubscribersCliStore) {
  const { active, inactive } = await store.countSubscribers();
  process.stdout.write(`active: ${active}\nleft: ${inactive}\n`);
}

const LEFT = new Set(['unsubscribed', 'bounced', 'complained']);

async function exportCsv(store: SubscribersCliStore, out: string | null) {
  const totals = { active: 0, left: 0 };
  async function* rows() {
    let after: string | null = null;
    for (;;) {
      const page = await store.listAllSubscribers(after, PAGE_SIZE);
      if (page.length === 0) return;
      for (const subscriber of page) {
        totals[subscriber.active ? 'active' : 'left']++;
        yield [subscriber.email, subscriber.status, LEFT.has(subscriber.status) ? subscriber.status : '', subscriber.createdAt.toISOString()];
      }
      after = page[page.length - 1]!.id;
    }
  }
  const csv = stringify({ header: true, columns: ['email', 'status', 'reason', 'created_at'] });
  if (out === null) {
    await pipeline(Readable.from(rows()), csv, process.stdout, { end: false });
  } else {
    // Written beside the target and renamed at the end, so a failed export leaves no half file.
    const partial = `${out}.partial`;
    try {
      await pipeline(Readable.from(rows()), csv, createWriteStream(partial));
      await rename(partial, out);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }
  process.stderr.write(`Exported ${totals.active + totals.left} subscribers (${totals.active} active, ${totals.left} left)${out ? ` to ${out}` : ''}.\n`);
}

interface ImportRow extends ImportFileRow {
  line: number;
}

/** Reads the file, reporting unusable rows on stderr; returns the rows worth adding. */
async function readImportFile(file: string): Promise<{ rows: ImportRow[]; invalid: number }> {
  let emailColumn: string | undefined;
  let statusColumn: string | undefined;
  let reasonColumn: string | undefined;
  const parser = parse({
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true,
    info: true,
    columns: (header: string[]) => {
      const names = header.map((name) => name.trim().toLowerCase().replace(/\s+/g, ' '));
      emailColumn = names.find((name) => EMAIL_HEADERS.has(name));
      statusColumn = names.find((name) => name === 'status');
      reasonColumn = names.find((name) => name === 'reason');
      if (!emailColumn) {
        throw new UsageError(`${file} has no email column: its header is "${header.join(',')}"; name the column "email" (or "email address", "e-mail").`);
      }
      return names;
    },
  });
  const rows: ImportRow[] = [];
  let invalid = 0;
  const records = createReadStream(file).pipe(parser) as AsyncIterable<{ record: Record<string, string | undefined>; info: { lines: number } }>;
  for await (const { record, info } of records) {
    const raw = record[emailColumn!] ?? '';
    const canonical = canonicalAddress(raw);
    const email = canonical.ok ? canonical.email : '';
    const problem = !canonical.ok ? canonical.message : email === '' ? 'no address' : emailProblem(email);
    if (problem) {
      invalid++;
      process.stderr.write(`line ${info.lines}: skipped ${JSON.stringify(raw)}: ${problem}\n`);
      continue;
    }
    const cell = (column: string | undefined) => (column ? (record[column] ?? '').trim().toLowerCase() : '');
    // The reason says more than an older export's "left".
    const state = IMPORT_STATES[cell(reasonColumn)] ?? IMPORT_STATES[cell(statusColumn)] ?? 'active';
    rows.push({ line: info.lines, email, state });
  }
  return { rows, invalid };
}

async function importCsv(store: SubscribersCliStore, keys: SubscriberKeys, file: string) {
  const { rows, invalid } = await readImportFile(file);
  const totals = await importSubscriberRows(store, keys, rows, {
    onChunk: (done, total) => process.stderr.write(`${done} of ${total} rows imported\n`),
  });
  process.stderr.write(
    `Imported ${file}: ${totals.added} added, ${totals.present} already present, ` +
      `${totals.leftAlone} left alone (unsubscribed, bounced or complained: an import never reactivates them), ` +
      `${totals.recordedLeft} recorded as left, ${invalid} invalid rows skipped.\n`,
  );
}

async function main(argv: string[]): Promise<number> {
  let command: Command | 'help';
  try {
    command = parseCommand(argv);
  } catch (error) {
    process.stderr.write(`subscribers: ${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command.name === 'import') {
    const file = await stat(command.file).catch(() => null);
    if (!file?.isFile()) {
      process.stderr.write(`subscribers: cannot read ${command.file}: ${file ? 'not a file' : 'no such file'}.\n`);
      return 1;
    }
  }

  let store: Store;
  let keys: SubscriberKeys;
  try {
    const config = await parseConfig(process.env);
    store = await openStore(config.store);
    keys = subscriberKeys(config.unsubscribeSecret, config.unsubscribeSecretPrevious ? [config.unsubscribeSecretPrevious] : [], storedMailboxKey(store));
  } catch (error) {
    if (error instanceof ConfigError || error instanceof StoreLockedError || error instanceof StoreUnavailableError) {
      process.stderr.write(`subscribers: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  try {
    if (command.name === 'count') await count(store);
    else if (command.name === 'export') await exportCsv(store, command.out);
    else await importCsv(store, keys, command.file);
    return 0;
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('CSV_') && command.name === 'import') {
      process.stderr.write(`subscribers: ${command.file} is not valid CSV: ${(error as Error).message}\n`);
      return 1;
    }
    if (error instanceof UsageError || error instanceof StoreUnavailableError || (error as NodeJS.ErrnoException).syscall) {
      process.stderr.write(`subscribers: ${(error as Error).message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await store.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
