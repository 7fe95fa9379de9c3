// One shape for every error the API answers with: {"error": code, "message": words for a person}.
import type { NextFunction, Request, Response } from 'express';

export function sendError(res: Response, status: number, error: string, message: string) {
  res.status(status).json({ error, message });
}

interface HttpError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
}

// What body-parser's failures mean to the person sending the request.
const BODY_PARSER_MESSAGES: Record<string, [string, string]> = {
  'entity.too.large': ['payload_too_large', 'The request body is too large.'],
  'entity.parse.failed': ['invalid_json', 'The request body is not valid JSON.'],
  'encoding.unsupported': ['unsupported_encoding', 'The request body uses an unsupported character set or encoding.'],
  'charset.unsupported': ['unsupported_encoding', 'The request body uses an unsupported character set or encoding.'],
  'parameters.too.many': ['too_many_fields', 'The form has too many fields.'],
  'request.aborted': ['request_aborted', 'The request was aborted before its body arrived.'],
  'request.size.invalid': ['invalid_body', 'The request body does not match its Content-Length.'],
};

// Other client errors come from serving files (a missing asset, a path that climbs out of the
// asset folder, a NUL byte) or from an address that does not decode.
const STATUS_MESSAGES: Record<number, [string, string]> = {
  403: ['forbidden', 'This address is not allowed.'],
  404: ['not_found', 'There is no such file.'],
};

/**
 * The last middleware. Client errors (bad bodies) get their 4xx with a message; anything else is
 * logged and answered with a plain 500 that reveals nothing about the internals.
 */
export function errorHandler(log: (error: unknown, req: Request) => void) {
  return (error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const httpError = (typeof error === 'object' && error !== null ? error : {}) as HttpError;
    const status = httpError.status ?? httpError.statusCode ?? 500;
    if (res.headersSent) {
      log(error, req);
      res.destroy();
      return;
    }
    // API callers read JSON; a person's browser asking for a page reads HTML.
    const wantsJson = ['/api/', '/webhooks/', '/assets/'].some((prefix) => req.path.startsWith(prefix)) || req.accepts(['html', 'json']) === 'json';
    if (status >= 400 && status < 500) {
      const [code, message] = BODY_PARSER_MESSAGES[httpError.type ?? ''] ??
        STATUS_MESSAGES[status] ?? ['bad_request', 'The request could not be understood.'];
      if (wantsJson) sendError(res, status, code, message);
      else res.status(status).type('html').send(plainPage('This address could not be understood', message));
      return;
    }
    log(error, req);
    if (wantsJson) {
      sendError(res, 500, 'internal_error', 'Something went wrong on our side. Please try again later.');
    } else {
      res.status(500).type('html').send(plainPage('Sorry, something went wrong on our side.', 'Please try again in a moment.'));
    }
  };
}

/** A minimal page for errors that happen before the site's own pages can render. */
function plainPage(heading: string, text: string): string {
  const escape = (value: string) => value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(heading)}</title><body style="font-family:system-ui,sans-serif;padding:4rem 1rem;text-align:center"><h1>${escape(heading)}</h1><p>${escape(text)}</p><p><a href="/">Go to the home page</a></p></body></html>`;
}
