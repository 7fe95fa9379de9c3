// The HTTP server the app answers on. Express gives each request and response its own prototypes
// (app.request, app.response) with Object.setPrototypeOf in app.handle: a change of hidden class
// on two objects per request, ~2 % of a signup's time on the app's thread (bench/RESULTS.md,
// issue 23). Node's server can make both objects with those prototypes from the start; V8's
// setPrototypeOf then finds the prototype already in place and changes nothing.
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Express } from 'express';

export interface AppServer extends Server {
  /** Answers every request with `app`; call once, before the first request arrives. */
  serve(app: Express): void;
}

/** A server that is not listening yet; `serve(app)` attaches the app (bin/serve.ts, the tests' server, the signup bench's). */
export function createAppServer(): AppServer {
  // Constructor functions rather than classes: a class's prototype cannot be reassigned, and the
  // objects must have the app's prototypes themselves, not a subclass's that inherits them.
  function AppRequest(socket: unknown) {
    return Reflect.construct(IncomingMessage, [socket], AppRequest) as IncomingMessage;
  }
  function AppResponse(request: unknown, options: unknown) {
    return Reflect.construct(ServerResponse, [request, options], AppResponse) as ServerResponse;
  }
  AppRequest.prototype = IncomingMessage.prototype;
  AppResponse.prototype = ServerResponse.prototype;
  const server = createServer({
    IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof ServerResponse,
  });
  return Object.assign(server, {
    serve(app: Express) {
      AppRequest.prototype = app.request;
      AppResponse.prototype = app.response;
      server.on('request', app);
    },
  });
}
