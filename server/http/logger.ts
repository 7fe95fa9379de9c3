// Structured JSON lines in production (pino), short readable lines in development. E-mail
// addresses and secrets never reach a log line: known secret fields are redacted and any address
// anywhere in the finished line (message, fields, error messages and stacks) is masked.
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import type { RequestHandler } from 'express';
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

const EMAIL = /([\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]*@([\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+)/gu;

/** `reader@example.com` → `r***@example.com`. */
export function maskEmails(text: string): string {
  // Most lines (every request's) hold no @ at all; the Unicode pattern is not run over those.
  return text.includes('@') ? text.replace(EMAIL, '$1***@$2') : text;
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

// pino writes strings; both streams take them as they come (decodeStrings: false) rather than
// have Node copy each line into a Buffer only for it to be turned back into a string.
const text = (chunk: Buffer | string) => (typeof chunk === 'string' ? chunk : chunk.toString());

function readableLines(out: NodeJS.WritableStream): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: Buffer | string, _encoding, callback) {
      try {
        const { level, time, msg, err, pid: _pid, hostname: _host, ...rest } = JSON.parse(text(chunk)) as Record<string, unknown>;
        const clock = new Date(time as number).toISOString().slice(11, 19);
        const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
        const stack = err && typeof err === 'object' && 'stack' in err ? `\n${String(err.stack)}` : '';
        out.write(`${clock} ${LEVEL_NAMES[level as number] ?? level} ${msg ?? ''}${extra}${stack}\n`);
      } catch {
        out.write(chunk);
      }
      callback();
    },
  });
}

// Masking the serialised line rather than the object pino is given: an Error's message and stack
// are not enumerable, so masking a JSON copy of the object would erase them instead, and a message
// pino takes from `error.message` never passes through a log-method hook.
function maskedLines(out: NodeJS.WritableStream): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: Buffer | string, _encoding, callback) {
      out.write(maskEmails(text(chunk)));
      callback();
    },
  });
}

export function createLogger(options: { level: string; pretty: boolean; destination?: NodeJS.WritableStream }): Logger {
  const destination = options.destination ?? process.stderr;
  return pino(
    {
      level: options.level,
      redact: {
        paths: ['email', '*.email', 'to', '*.to', 'token', '*.token', 'apiKey', '*.apiKey', 'secret', '*.secret', 'headers.authorization', 'headers.cookie'],
        censor: '[redacted]',
      },
    },
    maskedLines(options.pretty ? readableLines(destination) : destination),
  );
}

/**
 * One line per request when its answer has been sent: method, path (never the query: it can carry
 * tokens), status and milliseconds.
 */
export function requestLogger(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.on('finish', () => {
      const ms = performance.now() - started;
      const { method, path } = req;
      const status = res.statusCode;
      logger.info({ method, path, status, ms: Math.round(ms * 10) / 10 }, `${method} ${path} ${status} ${ms.toFixed(1)}ms`);
    });
    next();
  };
}
