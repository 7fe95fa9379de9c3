// A signup's body in its usual form, read without body-parser: JSON in UTF-8, uncompressed, with a
// Content-Length within the limit. Body-parser reads any body (charsets, compression, chunked) and
// pays for it on every request: content-type parsing twice, a raw-body stream reader, iconv's
// decoder, its debug calls; on the signup path that was ~5 % of the app's CPU (bench/RESULTS.md).
// Any other body is left to body-parser, which keeps every rule and error. What this reads it
// answers exactly as body-parser's strict JSON parser would: the same req.body, and for a bad body
// an error of the same status and type, so errors.ts gives the same answer.

import type { IncomingMessage } from 'node:http';

const PLAIN_JSON_TYPES: ReadonlySet<string> = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);
const DECIMAL_LENGTH = /^[1-9][0-9]{0,8}$/;
const BYTE_ORDER_MARK = 0xfeff;

type BodyRequest = IncomingMessage & { body?: unknown };

/** A client error as body-parser makes it (http-errors): errors.ts answers by its status and type. */
function bodyError(status: number, type: string, message: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, type, expose: true });
}

/**
 * The declared length of a body this module reads, or null when body-parser must read it: another
 * content type or charset, a compressed or chunked body, no Content-Length, or one over `limit`
 * (body-parser then answers 413).
 */
export function plainJsonLength(req: Pick<BodyRequest, 'headers'>, limit: number): number | null {
  const { headers } = req;
  const type = headers['content-type'];
  if (typeof type !== 'string' || !PLAIN_JSON_TYPES.has(type.toLowerCase())) return null;
  if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return null;
  const declared = headers['content-length'];
  if (typeof declared !== 'string' || !DECIMAL_LENGTH.test(declared)) return null;
  const length = Number(declared);
  return length <= limit ? length : null;
}

/** body-parser's strict JSON: an object or an array, after optional whitespace. */
function parseStrictJson(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') throw new SyntaxError(`Unexpected token ${first ?? 'end of input'} in JSON: only an object or an array is accepted`);
  return JSON.parse(text);
}

/** The JSON of a body read whole, or the error body-parser gives for it. */
function parsedBody(req: BodyRequest, chunks: readonly Buffer[], received: number, length: number): Error | undefined {
  if (received !== length) return bodyError(400, 'request.size.invalid', 'request size did not match content length');
  let text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)).toString('utf8');
  // iconv-lite, body-parser's decoder, drops a leading byte order mark.
  if (text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
  try {
    req.body = parseStrictJson(text);
    return undefined;
  } catch (error) {
    return bodyError(400, 'entity.parse.failed', error instanceof Error ? error.message : 'invalid JSON');
  }
}

/**
 * Reads the body of `length` bytes that plainJsonLength accepted and sets req.body to its JSON.
 * Resolves with the error body-parser would have passed on (a body that is not strict JSON, a body
 * shorter than declared, a request aborted), or undefined. The listeners are unnamed arrows on
 * purpose: a named closure made per request costs a defineProperty call for its name in the
 * bundle, whose esbuild build keeps function names.
 */
export function readPlainJson(req: BodyRequest, length: number): Promise<Error | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(parsedBody(req, chunks, received, length));
    });
    // Closed or failed before its end: the client went away mid-body. (After the end, 'close'
    // always follows and changes nothing.)
    for (const event of ['close', 'error'] as const) {
      req.on(event, () => {
        if (settled) return;
        settled = true;
        resolve(bodyError(400, 'request.aborted', 'request aborted'));
      });
    }
  });
}
