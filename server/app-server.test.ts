// The app's server makes requests and responses with the Express app's own prototypes, so
// app.handle's Object.setPrototypeOf has nothing left to change; Express still works through them.
import express from 'express';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createAppServer } from './app-server.ts';

describe('app server', () => {
  it('makes each request and response with the app prototypes, and the app answers through them', async () => {
    const app = express();
    const server = createAppServer();
    const born: boolean[] = [];
    // Before the app sees them: what Node's server made.
    server.on('request', (req, res) => born.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response));
    server.serve(app);
    app.get('/hello', (req, res) => res.status(201).json({ ip: req.ip, path: req.path }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hello?x=1`);
      expect(answer.status).toBe(201);
      expect(await answer.json()).toEqual({ ip: '127.0.0.1', path: '/hello' });
      expect(born).toEqual([true, true]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
