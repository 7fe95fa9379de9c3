// The figures GET /metrics shows, in Prometheus' text format through prom-client, on a registry of
// this app's own (no module-level default registry: two apps in one process keep their figures
// apart). Store figures are read at scrape time from one snapshot, so every replica answers what
// the database holds; signup requests are counted by this process since it started.
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Request, RequestHandler, Response } from 'express';
import { SUBSCRIBER_STATUSES } from '../store/types.ts';
import type { MetricsSnapshot } from '../store/metrics.ts';

const BATCH_STATES = ['pending', 'sent', 'failed', 'unknown', 'skipped'] as const;
const OUTCOME_BY_STATUS: Record<number, string> = {
  201: 'subscribed',
  202: 'confirmation_sent',
  400: 'invalid',
  403: 'refused',
  409: 'already_subscribed',
  413: 'invalid',
  415: 'invalid',
  429: 'rate_limited',
  503: 'unavailable',
};
// What the no-JavaScript form's 303 carries in ?signup= (server/subscribers/signup.ts backToForm).
const FORM_OUTCOME = /[?&]signup=([a-z_]{1,40})(?:[&#]|$)/;

export interface Figures {
  registry: Registry;
  /** Counts each POST /api/subscribe by its outcome once it is answered. */
  countSignups: RequestHandler;
  /** Sets the store's figures from one snapshot, just before the registry is read. */
  show(snapshot: MetricsSnapshot): void;
}

function signupOutcome(_req: Request, res: Response): string {
  if (res.statusCode === 303) return FORM_OUTCOME.exec(res.get('Location') ?? '')?.[1] ?? 'other';
  return OUTCOME_BY_STATUS[res.statusCode] ?? (res.statusCode >= 500 ? 'error' : 'other');
}

export function createFigures(): Figures {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers: [registry] });
  const subscribers = gauge('launched_subscribers', 'Subscribers by state, as the store holds them now.', ['state']);
  const signups = gauge('launched_signups', 'Subscribers by the page they signed up on (or import) and their state now; the largest groups.', ['source', 'state']);
  const signupRequests = new Counter({ name: 'launched_signup_requests_total', help: 'Signup posts answered by this process since it started, by outcome.', labelNames: ['outcome'], registers: [registry] });
  const runInfo = gauge('launched_digest_run_info', 'The latest sending run (scheduled or manual): 1, labelled with its kind, week and outcome (running while it is not finished).', ['kind', 'week', 'outcome']);
  const runRunning = gauge('launched_digest_run_running', '1 while the latest sending run has not finished.');
  const runStarted = gauge('launched_digest_run_started_timestamp_seconds', 'When the latest sending run started (Unix time).');
  const runMessages = gauge('launched_digest_run_messages', "Messages in the latest run's batches, by batch state: its progress while it runs.", ['state']);
  const outbox = gauge('launched_outbox_messages', 'Promised e-mail (confirmations, links, welcomes, notices) not yet delivered, by state.', ['state']);
  const held = gauge('launched_outbox_held', '1 while the provider refuses the sender and the outbox holds its mail, else 0.');
  const heldMessages = gauge('launched_outbox_held_messages', 'Messages held because the provider refused the sender.');
  const clicks = gauge('launched_link_clicks', 'Clicks on /go/ links, over every week.');

  return {
    registry,
    countSignups(req, res, next) {
      res.once('finish', () => signupRequests.inc({ outcome: signupOutcome(req, res) }));
      next();
    },
    show(snapshot) {
      for (const state of SUBSCRIBER_STATUSES) subscribers.set({ state }, snapshot.subscribers[state] ?? 0);
      signups.reset();
      for (const group of snapshot.signups) signups.set({ source: group.source, state: group.state }, group.count);
      runInfo.reset();
      const run = snapshot.run;
      runRunning.set(run && !run.finishedAt ? 1 : 0);
      runStarted.set(run ? run.startedAt.getTime() / 1000 : 0);
      if (run) runInfo.set({ kind: run.kind, week: run.week ?? '', outcome: run.finishedAt ? (run.outcome ?? 'finished') : 'running' }, 1);
      for (const state of BATCH_STATES) runMessages.set({ state }, run?.messages[state] ?? 0);
      outbox.set({ state: 'queued' }, snapshot.outbox.queued);
      outbox.set({ state: 'retrying' }, snapshot.outbox.retrying);
      held.set(snapshot.outbox.held > 0 ? 1 : 0);
      heldMessages.set(snapshot.outbox.held);
      clicks.set(snapshot.clicks);
    },
  };
}
