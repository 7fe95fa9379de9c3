// A small stand-in for Supabase's REST interface (PostgREST) on top of a real Postgres, answering
// the requests the Supabase store makes, in PostgREST's documented format. Each request runs in
// one transaction under the role its key names (`set local role`), so Postgres itself enforces
// the grants and row-level security, as on Supabase. Every value travels as a query parameter;
// names are checked against the catalog before they are quoted into SQL.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

/** A JWT-shaped key with the given claims; the fake, like a gateway that trusts it, reads `role`. */
export function unsignedJwt(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.unsigned`;
}

export interface RecordedRequest {
  method: string;
  /** Path and query, decoded, e.g. `/rest/v1/email_signups?select=id&email=eq.a@b.c`. */
  path: string;
  role: string;
  prefer: string;
}

export interface FakePostgrest {
  url: string;
  anonKey: string;
  serviceRoleKey: string;
  authenticatedKey: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

interface PgrstError {
  code: string;
  message: string;
  details: string | null;
  hint: string | null;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: PgrstError,
  ) {
    super(body.message);
  }
}

const pgrst = (status: number, code: string, message: string, details: string | null = null, hint: string | null = null) =>
  new HttpError(status, { code, message, details, hint });

const API_ROLES = new Set(['anon', 'authenticated', 'service_role']);
const IDENT = /^[a-z_][a-z0-9_]*$/;
// One type name, no spaces: nothing but a type can be spelled with it.
const CAST_TYPE = /^[a-z_][a-z0-9_]*(\[\])?$/;
const RESERVED_PARAMS = new Set(['select', 'order', 'limit', 'offset', 'on_conflict', 'columns']);
const TARGET = '_pgrst_target';
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** PostgREST's SQLSTATE to HTTP status table (docs: references/errors, "HTTP Status Codes"). */
function statusForSqlState(code: string, role: string): number {
  if (code === '42501') return role === 'anon' ? 401 : 403;
  const exact: Record<string, number> = { '23503': 409, '23505': 409, '25006': 405, '53400': 500, '42883': 404, '42P01': 404, '42P17': 500, P0001: 400 };
  if (exact[code]) return exact[code];
  const byClass: Record<string, number> = {
    '08': 503, '09': 500, '0L': 403, '0P': 403, '25': 500, '28': 403, '2D': 500, '38': 500, '39': 500, '3B': 500,
    '40': 500, '53': 503, '54': 500, '55': 500, '57': 500, '58': 500, F0: 500, HV: 500, P0: 500, XX: 500,
  };
  return byClass[code.slice(0, 2)] ?? 400;
}

function roleOf(req: IncomingMessage): { role: string; claims: Record<string, unknown> } {
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const apikey = typeof req.headers.apikey === 'string' ? req.headers.apikey : undefined;
  const token = bearer ?? apikey;
  // No key at all: PostgREST runs the request as its anonymous role.
  if (!token) return { role: 'anon', claims: { role: 'anon' } };
  const payload = token.split('.')[1];
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    throw pgrst(401, 'PGRST301', 'Expected 3 parts in JWT; got 1');
  }
  const role = typeof claims.role === 'string' ? claims.role : 'anon';
  if (!API_ROLES.has(role)) throw pgrst(401, 'PGRST301', `role "${role}" does not exist`);
  return { role, claims };
}

interface Column {
  name: string;
  type: string;
}

async function tableColumns(db: pg.PoolClient, table: string): Promise<Column[]> {
  const result = await db.query<Column>(
    `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type
     from pg_attribute a
     join pg_class c on c.oid = a.attrelid
     join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public' and c.relname = $1 and c.relkind in ('r', 'v', 'p', 'm', 'f')
       and a.attnum > 0 and not a.attisdropped
     order by a.attnum`,
    [table],
  );
  if (result.rows.length === 0) {
    throw pgrst(404, 'PGRST205', `Could not find the table 'public.${table}' in the schema cache`);
  }
  return result.rows;
}

async function primaryKey(db: pg.PoolClient, table: string): Promise<string[]> {
  const result = await db.query<{ name: string }>(
    `select a.attname as name
     from pg_index i
     join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
     where i.indrelid = ('public.' || quote_ident($1))::regclass and i.indisprimary`,
    [table],
  );
  return result.rows.map((row) => row.name);
}

/** Builds SQL with numbered parameters. */
class Sql {
  readonly params: unknown[] = [];
  constructor(private readonly columns: Column[], private readonly table: string) {}

  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  has(name: string): boolean {
    return IDENT.test(name) && this.columns.some((c) => c.name === name);
  }

  column(name: string): Column {
    const column = this.columns.find((c) => c.name === name);
    if (!column || !IDENT.test(name)) throw pgrst(400, '42703', `column ${this.table}.${name} does not exist`);
    return column;
  }

  ref(name: string): string {
    return `${TARGET}.${quote(this.column(name).name)}`;
  }

  /** `select=a,b::text,alias:c` or `*`. */
  selection(raw: string | null): string {
    if (raw === null || raw === '' || raw === '*') return `${TARGET}.*`;
    return raw
      .split(',')
      .map((item) => {
        const match = /^(?:([a-z_][a-z0-9_]*):)?([a-z_][a-z0-9_]*)(?:::(.+))?$/.exec(item);
        if (!match) throw pgrst(400, 'PGRST100', `"failed to parse select parameter (${raw})"`);
        const [, alias, name, cast] = match as unknown as [string, string | undefined, string, string | undefined];
        if (cast !== undefined && !CAST_TYPE.test(cast)) throw pgrst(400, 'PGRST100', `"failed to parse select parameter (${raw})"`);
        return `${this.ref(name)}${cast ? `::${cast}` : ''} as ${quote(alias ?? name)}`;
      })
      .join(', ');
  }

  /** Horizontal filters: every query parameter that is not a reserved word. */
  where(search: URLSearchParams): string {
    const conditions: string[] = [];
    for (const [name, raw] of search) {
      if (RESERVED_PARAMS.has(name)) continue;
      conditions.push(this.filter(name, raw));
    }
    return conditions.length > 0 ? `where ${conditions.join(' and ')}` : '';
  }

  private filter(name: string, raw: string): string {
    const bad = () => pgrst(400, 'PGRST100', `"failed to parse filter (${raw})" (line 1, column 1)`);
    let rest = raw;
    let negate = false;
    if (rest.startsWith('not.')) {
      negate = true;
      rest = rest.slice(4);
    }
    const dot = rest.indexOf('.');
    if (dot < 0) throw bad();
    const operator = rest.slice(0, dot);
    const value = rest.slice(dot + 1);
    const ref = this.ref(name);
    const comparisons: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };
    let condition: string;
    if (comparisons[operator]) {
      condition = `${ref} ${comparisons[operator]} ${this.param(value)}`;
    } else if (operator === 'is') {
      const keyword = { null: 'null', not_null: 'not null', true: 'true', false: 'false', unknown: 'unknown' }[value.toLowerCase()];
      if (!keyword) throw bad();
      condition = `${ref} is ${keyword}`;
    } else if (operator === 'in') {
      const items = parseList(value);
      if (items === null) throw bad();
      condition = items.length === 0 ? 'false' : `${ref} in (${items.map((item) => this.param(item)).join(', ')})`;
    } else {
      throw bad();
    }
    return negate ? `not (${condition})` : condition;
  }

  /** `order=a.asc,b.desc.nullslast` */
  orderBy(raw: string | null): string {
    if (!raw) return '';
    const terms = raw.split(',').map((term) => {
      const [name, ...modifiers] = term.split('.');
      let sql = this.ref(name ?? '');
      for (const modifier of modifiers) {
        const keyword = { asc: 'asc', desc: 'desc', nullsfirst: 'nulls first', nullslast: 'nulls last' }[modifier];
        if (!keyword) throw pgrst(400, 'PGRST100', `"failed to parse order (${raw})" (line 1, column 1)`);
        sql += ` ${keyword}`;
      }
      return sql;
    });
    return `order by ${terms.join(', ')}`;
  }

  /** A json_to_recordset column list with each column's catalog type. */
  recordType(names: string[]): string {
    return names.map((name) => `${quote(name)} ${this.column(name).type}`).join(', ');
  }
}

/** `(a,"b,c",d)` → ['a', 'b,c', 'd'] */
function parseList(raw: string): string[] | null {
  if (!raw.startsWith('(') || !raw.endsWith(')')) return null;
  const body = raw.slice(1, -1);
  if (body === '') return [];
  const items: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (quoted && char === '\\' && i + 1 < body.length) current += body[++i];
    else if (char === '"') quoted = !quoted;
    else if (char === ',' && !quoted) {
      items.push(current);
      current = '';
    } else current += char;
  }
  items.push(current);
  return items;
}

function preferences(req: IncomingMessage): Map<string, string> {
  const header = req.headers.prefer;
  const raw = Array.isArray(header) ? header.join(',') : (header ?? '');
  const prefs = new Map<string, string>();
  for (const item of raw.split(',')) {
    const [key, value] = item.trim().split('=');
    if (key && value) prefs.set(key, value);
  }
  return prefs;
}

function limitClause(search: URLSearchParams, sql: Sql): { clause: string; offset: number } {
  const parts: string[] = [];
  let offset = 0;
  for (const name of ['limit', 'offset'] as const) {
    const raw = search.get(name);
    if (raw === null) continue;
    if (!/^\d+$/.test(raw)) throw pgrst(400, 'PGRST100', `"failed to parse ${name} parameter (${raw})"`);
    if (name === 'offset') offset = Number(raw);
    parts.push(`${name} ${sql.param(Number(raw))}`);
  }
  return { clause: parts.join(' '), offset };
}

interface Reply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

const range = (offset: number, rows: number, total: number | null) =>
  `${rows > 0 ? `${offset}-${offset + rows - 1}` : '*'}/${total ?? '*'}`;

async function readTable(db: pg.PoolClient, table: string, url: URL, req: IncomingMessage): Promise<Reply> {
  const sql = new Sql(await tableColumns(db, table), table);
  const select = sql.selection(url.searchParams.get('select'));
  const where = sql.where(url.searchParams);
  const order = sql.orderBy(url.searchParams.get('order'));
  const whereParams = sql.params.length;
  const { clause, offset } = limitClause(url.searchParams, sql);
  const from = `from public.${quote(table)} as ${TARGET}`;
  const page = await db.query<{ body: string; rows: number }>(
    `select coalesce(json_agg(_pgrst_t), '[]')::text as body, count(*)::int as rows
     from (select ${select} ${from} ${where} ${order} ${clause}) _pgrst_t`,
    sql.params,
  );
  let total: number | null = null;
  if (preferences(req).get('count') === 'exact') {
    const counted = await db.query<{ n: number }>(`select count(*)::int as n ${from} ${where}`, sql.params.slice(0, whereParams));
    total = counted.rows[0]!.n;
  }
  const { body, rows } = page.rows[0]!;
  return { status: 200, body, headers: { 'Content-Range': range(offset, rows, total) } };
}

function jsonRows(body: unknown): Record<string, unknown>[] {
  const rows = Array.isArray(body) ? body : [body];
  if (!rows.every((row) => typeof row === 'object' && row !== null && !Array.isArray(row))) {
    throw pgrst(400, 'PGRST102', 'All object keys must match');
  }
  return rows as Record<string, unknown>[];
}

async function insertRows(db: pg.PoolClient, table: string, url: URL, req: IncomingMessage, body: unknown): Promise<Reply> {
  const sql = new Sql(await tableColumns(db, table), table);
  const prefs = preferences(req);
  const rows = jsonRows(body);
  const listed = url.searchParams.get('columns');
  const names = listed !== null ? listed.split(',').map((name) => name.replace(/^"|"$/g, '')) : [...new Set(rows.flatMap((row) => Object.keys(row)))];
  for (const name of names) {
    if (!sql.has(name)) throw pgrst(400, 'PGRST204', `Could not find the '${name}' column of '${table}' in the schema cache`);
  }
  const returning = prefs.get('return') === 'representation';
  if (rows.length === 0 || names.length === 0) return { status: 201, body: returning ? '[]' : undefined, headers: { 'Content-Range': '*/*' } };
  const columnList = names.map(quote).join(', ');
  let conflict = '';
  const resolution = prefs.get('resolution');
  if (resolution === 'ignore-duplicates' || resolution === 'merge-duplicates') {
    const onConflict = url.searchParams.get('on_conflict');
    const target = onConflict ? onConflict.split(',') : await primaryKey(db, table);
    target.forEach((name) => sql.column(name));
    conflict =
      resolution === 'ignore-duplicates'
        ? `on conflict (${target.map(quote).join(', ')}) do nothing`
        : `on conflict (${target.map(quote).join(', ')}) do update set ${names.map((n) => `${quote(n)} = excluded.${quote(n)}`).join(', ')}`;
  }
  const insert = `insert into public.${quote(table)} as ${TARGET} (${columnList})
    select ${columnList} from json_to_recordset(${sql.param(JSON.stringify(rows))}::json) as _pgrst_body(${sql.recordType(names)})
    ${conflict}`;
  const applied = [prefs.has('return') ? `return=${prefs.get('return')}` : '', resolution ? `resolution=${resolution}` : ''].filter(Boolean).join(', ');
  const headers: Record<string, string> = { 'Content-Range': '*/*', ...(applied ? { 'Preference-Applied': applied } : {}) };
  if (!returning) {
    await db.query(insert, sql.params);
    return { status: 201, headers };
  }
  const select = sql.selection(url.searchParams.get('select'));
  const result = await db.query<{ body: string; rows: number }>(
    `with _pgrst_rows as (${insert} returning ${select})
     select coalesce(json_agg(_pgrst_rows), '[]')::text as body, count(*)::int as rows from _pgrst_rows`,
    sql.params,
  );
  const { body: json, rows: count } = result.rows[0]!;
  return { status: 201, body: json, headers: { ...headers, 'Content-Range': range(0, count, null) } };
}

async function updateRows(db: pg.PoolClient, table: string, url: URL, req: IncomingMessage, body: unknown): Promise<Reply> {
  const sql = new Sql(await tableColumns(db, table), table);
  const [row] = jsonRows(body);
  if (Array.isArray(body) || !row) throw pgrst(400, 'PGRST102', 'Empty or invalid json');
  const names = Object.keys(row);
  for (const name of names) {
    if (!sql.has(name)) throw pgrst(400, 'PGRST204', `Could not find the '${name}' column of '${table}' in the schema cache`);
  }
  const returning = preferences(req).get('return') === 'representation';
  const payload = sql.param(JSON.stringify(row));
  const where = sql.where(url.searchParams);
  const update = `update public.${quote(table)} as ${TARGET}
    set ${names.map((name) => `${quote(name)} = _pgrst_body.${quote(name)}`).join(', ')}
    from json_to_record(${payload}::json) as _pgrst_body(${sql.recordType(names)})
    ${where}`;
  if (!returning) {
    const result = await db.query(update, sql.params);
    return { status: 204, headers: { 'Content-Range': range(0, result.rowCount ?? 0, null) } };
  }
  const select = sql.selection(url.searchParams.get('select'));
  const result = await db.query<{ body: string; rows: number }>(
    `with _pgrst_rows as (${update} returning ${select})
     select coalesce(json_agg(_pgrst_rows), '[]')::text as body, count(*)::int as rows from _pgrst_rows`,
    sql.params,
  );
  const { body: json, rows } = result.rows[0]!;
  return { status: 200, body: json, headers: { 'Content-Range': range(0, rows, null), 'Preference-Applied': 'return=representation' } };
}

async function callFunction(db: pg.PoolClient, name: string, body: unknown): Promise<Reply> {
  const args = body === undefined ? {} : body;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw pgrst(400, 'PGRST102', 'Empty or invalid json');
  const keys = Object.keys(args).sort();
  const candidates = await db.query<{ argnames: string[] | null; argtypes: string[]; required: number; void: boolean; retset: boolean }>(
    `select p.proargnames as argnames, p.proargtypes::regtype[]::text[] as argtypes, p.pronargs - p.pronargdefaults as required,
            p.prorettype = 'void'::regtype as void, p.proretset as retset
     from pg_proc p where p.pronamespace = 'public'::regnamespace and p.proname = $1`,
    [name],
  );
  const match = candidates.rows.find((fn) => {
    const names = fn.argnames ?? [];
    return keys.every((key) => names.includes(key)) && keys.length >= fn.required;
  });
  if (!match || !IDENT.test(name) || !keys.every((key) => IDENT.test(key))) {
    throw pgrst(
      404,
      'PGRST202',
      `Could not find the function public.${name}(${keys.join(', ')}) in the schema cache`,
      `Searched for the function public.${name} with parameters ${keys.join(', ')} or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.`,
    );
  }
  if (match.retset) throw new Error(`fake PostgREST: set-returning function ${name} is not supported`);
  const params: unknown[] = [];
  const named = keys.map((key) => {
    const value = (args as Record<string, unknown>)[key];
    // PostgREST converts each JSON argument to its parameter's declared type: an array goes to a
    // Postgres array parameter (text[]) as an array, any object or array to json/jsonb as JSON.
    const type = match.argtypes[(match.argnames ?? []).indexOf(key)] ?? '';
    const asJson = value !== null && typeof value === 'object' && (!Array.isArray(value) || /^jsonb?$/.test(type));
    params.push(asJson ? JSON.stringify(value) : value);
    return `${quote(key)} := $${params.length}`;
  });
  const call = `public.${quote(name)}(${named.join(', ')})`;
  if (match.void) {
    await db.query(`select ${call}`, params);
    return { status: 204 };
  }
  const result = await db.query<{ body: string }>(`select to_json(${call})::text as body`, params);
  return { status: 200, body: result.rows[0]!.body ?? 'null', headers: { 'Content-Range': '0-0/*' } };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1_000_000) throw pgrst(413, 'PGRST102', 'Request body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw pgrst(400, 'PGRST102', 'Empty or invalid json');
  }
}

export async function startFakePostgrest(databaseUrl: string): Promise<FakePostgrest> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 20, connectionTimeoutMillis: 3_000 });
  pool.on('error', () => {});
  const requests: RecordedRequest[] = [];

  async function answer(req: IncomingMessage): Promise<Reply> {
    const url = new URL(req.url ?? '/', 'http://fake-postgrest');
    const path = url.pathname.replace(/^\/rest\/v1\//, '');
    if (path === url.pathname) throw pgrst(404, 'PGRST125', `Invalid path specified in request URL`);
    const { role, claims } = roleOf(req);
    const method = req.method ?? 'GET';
    requests.push({ method, path: decodeURIComponent(url.pathname + url.search), role, prefer: String(req.headers.prefer ?? '') });
    const isRpc = path.startsWith('rpc/');
    const name = isRpc ? path.slice(4) : path;
    if (!IDENT.test(name)) throw pgrst(404, isRpc ? 'PGRST202' : 'PGRST205', `Could not find '${name}' in the schema cache`);
    const writes = method === 'POST' || method === 'PATCH';
    if (writes && !/^application\/json/.test(req.headers['content-type'] ?? '')) {
      throw pgrst(415, 'PGRST107', `Content-Type not acceptable: ${req.headers['content-type'] ?? ''}`);
    }
    const body = writes ? await readBody(req) : undefined;

    let db: pg.PoolClient;
    try {
      db = await pool.connect();
    } catch (error) {
      throw pgrst(503, 'PGRST000', 'Database connection error. Retrying the connection.', (error as Error).message);
    }
    try {
      await db.query('begin');
      await db.query(`set local role ${quote(role)}`);
      await db.query("select set_config('request.jwt.claims', $1, true)", [JSON.stringify(claims)]);
      let reply: Reply;
      if (isRpc) {
        if (method !== 'POST') throw pgrst(405, 'PGRST101', 'Only GET and POST verbs are allowed for functions; this fake answers POST');
        reply = await callFunction(db, name, body);
      } else if (method === 'GET' || method === 'HEAD') reply = await readTable(db, name, url, req);
      else if (method === 'POST') reply = await insertRows(db, name, url, req, body);
      else if (method === 'PATCH') reply = await updateRows(db, name, url, req, body);
      else throw pgrst(405, 'PGRST117', `Unsupported HTTP method: ${method}`);
      await db.query('commit');
      return reply;
    } catch (error) {
      await db.query('rollback').catch(() => {});
      if (error instanceof HttpError) throw error;
      const pgError = error as pg.DatabaseError;
      if (typeof pgError.code === 'string') {
        throw new HttpError(statusForSqlState(pgError.code, role), {
          code: pgError.code,
          message: pgError.message,
          details: pgError.detail ?? null,
          hint: pgError.hint ?? null,
        });
      }
      throw error;
    } finally {
      db.release();
    }
  }

  const send = (req: IncomingMessage, res: ServerResponse, reply: Reply) => {
    const headers: Record<string, string> = { ...reply.headers };
    if (reply.body !== undefined) headers['Content-Type'] = 'application/json; charset=utf-8';
    res.writeHead(reply.status, headers);
    res.end(req.method === 'HEAD' || reply.status === 204 ? undefined : reply.body);
  };

  const server = createServer((req, res) => {
    answer(req).then(
      (reply) => send(req, res, reply),
      (error: unknown) => {
        if (error instanceof HttpError) send(req, res, { status: error.status, body: JSON.stringify(error.body) });
        else send(req, res, { status: 500, body: JSON.stringify({ code: 'PGRSTX00', message: String(error), details: null, hint: null }) });
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    anonKey: unsignedJwt({ iss: 'supabase', role: 'anon' }),
    serviceRoleKey: unsignedJwt({ iss: 'supabase', role: 'service_role' }),
    authenticatedKey: unsignedJwt({ iss: 'supabase', role: 'authenticated', sub: '00000000-0000-0000-0000-000000000001' }),
    requests,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await pool.end();
    },
  };
}
