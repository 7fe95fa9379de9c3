// What every request passes before any route, in ONE middleware layer: the proxy check, the
// request log line and compression; the security headers go on as each answer's head goes out
// (securityHeadersAtHead). As four `app.use` layers each request
// paid Express's per-layer matching and bookkeeping four times, helmet's chain of a dozen small
// middlewares, and pino's redaction of every field of the log line; on the signup benchmark
// (bench/signup.ts, npm start's 2 MiB young generation) that allocation is what made the
// scavenger run and promote requests still in flight. Measured: bench/RESULTS.md, note "What every
// request costs before its route: one front layer".
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import type { Logger } from './logger.ts';

/** Headers to set on every answer, and headers to take off it. */
export interface HeaderSet {
  set: readonly (readonly [name: string, value: string])[];
  remove: readonly string[];
}

/**
 * The headers helmet's middleware writes for these options, recorded once by running it on a
 * stand-in response. Helmet stays the source of every name and value; with no per-request
 * directive (no CSP nonce, no function values) they depend only on the options, so writing the
 * recorded list costs each request a dozen setHeader calls and nothing else. A helmet that ever
 * needed more than setHeader/removeHeader, or answered asynchronously, makes this throw at start-up.
 */
export function helmetHeaders(options: Readonly<HelmetOptions>): HeaderSet {
  const set: [string, string][] = [];
  const remove: string[] = [];
  const standIn = {
    setHeader(name: string, value: unknown) {
      if (typeof value !== 'string') throw new Error(`helmet set ${name} to a ${typeof value}, not a string`);
      // Lower case, as Node keys them: setHeader then stores the name as it is instead of a
      // lower-cased copy per header per request (header names are case-insensitive, RFC 9110).
      set.push([name.toLowerCase(), value]);
    },
    removeHeader(name: string) {
      remove.push(name.toLowerCase());
    },
  };
  let finished = false;
  helmet(options)({} as IncomingMessage, standIn as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error(String(error));
    finished = true;
  });
  if (!finished) throw new Error('helmet did not finish synchronously; its headers cannot be recorded once');
  return { set, remove };
}

/** Raw header lists as `writeHead` takes them: name, value, name, value, … */
type RawHeaders = string[];
type WriteHead = (this: ServerResponse, statusCode: number, ...rest: unknown[]) => ServerResponse;

const isRawHeaders = (value: unknown): value is RawHeaders => Array.isArray(value) && value.length % 2 === 0 && value.every((item) => typeof item === 'string');

/**
 * Puts `headers` on every answer as its head goes out, by wrapping `writeHead` on Express's
 * response prototype (app.response): every answer passes there, whether a route calls it or Node
 * does when the body starts (res.end, res.json, redirects, static files, error pages). A header
 * the answer has set itself (a page's own Referrer-Policy) is left as it is. Written at head time
 * rather than when the request arrives, an answer given with its headers in hand
 * (`res.writeHead(status, ['content-type', …])`, the signup's: server/signup.ts) goes out through
 * Node's list path with no per-request header dictionary at all; the dozen security headers were
 * about 15 % of what a signup allocated (bench/RESULTS.md).
 */
export function securityHeadersAtHead(response: { writeHead: unknown }, headers: HeaderSet): void {
  const writeHead = response.writeHead as WriteHead;
  response.writeHead = function writeHeadSecured(this: ServerResponse, statusCode: number, ...rest: unknown[]) {
    const last = rest.at(-1);
    if (isRawHeaders(last)) {
      const own: string[] = [];
      for (let i = 0; i < last.length; i += 2) own.push(last[i]!.toLowerCase());
      const list: RawHeaders = [];
      for (const [name, value] of headers.set) if (!own.includes(name) && !this.hasHeader(name)) list.push(name, value);
      rest[rest.length - 1] = list.concat(last);
    } else {
      for (const [name, value] of headers.set) if (!this.hasHeader(name)) this.setHeader(name, value);
      for (const name of headers.remove) this.removeHeader(name);
    }
    return writeHead.call(this, statusCode, ...rest);
  };
}

/**
 * One line per request when its answer has been sent: method, path (never the query: it can carry
 * tokens), status and milliseconds. Logged through a child logger without key redaction: these four
 * fields are none of the redacted keys, while pino's wildcard paths (`*.email`, …) otherwise run
 * the redactor over every value of every line, strings and numbers included, re-parsing each path
 * each time. E-mail addresses in the finished line are still masked (logger.ts).
 */
export function requestLogger(logger: Logger): (req: Request, res: Response) => void {
  const lines = logger.child({}, { redact: [] });
  return (req, res) => {
    const started = performance.now();
    res.on('finish', () => {
      const ms = performance.now() - started;
      const { method, path } = req;
      const status = res.statusCode;
      lines.info({ method, path, status, ms: Math.round(ms * 10) / 10 }, `${method} ${path} ${status} ${ms.toFixed(1)}ms`);
    });
  };
}

export interface FrontDoorOptions {
  /** Looks at the request's proxy headers (proxy-check.ts); never answers. */
  proxyCheck: (req: Request) => void;
  log: (req: Request, res: Response) => void;
  compress: RequestHandler;
  /** Paths whose answers are never compressed. */
  uncompressed: (path: string) => boolean;
  /**
   * POST routes the front door answers itself, by path: the request goes straight to its handler
   * instead of walking the app's router to its route (an error it passes on still reaches the app's
   * error handler). For the one hot POST, the signup: the router's layers, their matching and their
   * bookkeeping were ~10 % of what a signup allocated (bench/RESULTS.md). Each path must be one of
   * the uncompressed ones.
   */
  postRoutes?: ReadonlyMap<string, RequestHandler>;
}

export function frontDoor({ proxyCheck, log, compress, uncompressed, postRoutes = new Map() }: FrontDoorOptions): RequestHandler {
  for (const path of postRoutes.keys()) {
    if (!uncompressed(path)) throw new Error(`the front door answers POST ${path} itself, so its answers must be uncompressed`);
  }
  return (req, res, next) => {
    proxyCheck(req);
    log(req, res);
    const path = req.path;
    if (!uncompressed(path)) return void compress(req, res, next);
    const route = req.method === 'POST' ? postRoutes.get(path) : undefined;
    if (route) void route(req, res, next);
    else next();
  };
}

/**
 * Handlers run in order as one Express route runs them: next() goes on to the next handler; an
 * error passed to next, thrown, or a rejected promise goes to `done` (the app's error handler);
 * next('route') and the end of the list leave the route by `done()`. (Each step's `next` is an
 * unnamed arrow on purpose: a named closure made per request costs a defineProperty call for
 * its name in the bundle, whose esbuild build keeps function names.)
 */
export function handlerChain(handlers: readonly RequestHandler[]): RequestHandler {
  const runFrom = (index: number, req: Request, res: Response, done: NextFunction): void => {
    const handler = handlers[index];
    if (!handler) return done();
    try {
      const returned: unknown = handler(req, res, (signal?: unknown) => {
        if (signal === 'route') done();
        else if (signal) done(signal);
        else runFrom(index + 1, req, res, done);
      });
      if (returned instanceof Promise) returned.catch((error: unknown) => done(error ?? new Error('Rejected promise')));
    } catch (error) {
      done(error);
    }
  };
  return (req, res, done) => runFrom(0, req, res, done);
}

/** What a router's stack holds at run time: its layers match a path (router/lib/layer.js). */
interface MatchingLayer {
  route?: unknown;
  match(path: string): unknown;
}

/**
 * A router made only of routes (no middleware of its own), entered only by a request whose path one
 * of them matches; any other request goes straight on. Express enters every router mounted on '/'
 * and, when none of its routes takes the request, continues on the NEXT turn of the event loop
 * (setImmediate): a signup walked through one such router and a page through eight, each time with
 * the router's bookkeeping, an Immediate and the request kept alive a turn longer. A request whose
 * path one route matches enters exactly as before (its method decided inside, 405s included).
 */
export function onlyItsPaths(router: Router): RequestHandler {
  const stack = router.stack as unknown as MatchingLayer[];
  if (stack.some((layer) => !layer.route)) return router;
  return (req, res, next) => {
    let enter: boolean;
    try {
      enter = stack.some((layer) => layer.match(req.path));
    } catch {
      // A path a route cannot decode: the router reports it as it always did.
      enter = true;
    }
    if (enter) router(req, res, next);
    else next();
  };
}
