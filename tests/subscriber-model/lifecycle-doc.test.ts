// docs/subscriber-lifecycle.md is the table in server/subscribers/lifecycle.ts as a reader sees it:
// if one changed without the other, a reader would trust rules the code no longer has.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { EVENT_TEXT, EVENTS, lifecycleMarkdown, next, STATES } from '../../server/subscribers/lifecycle.ts';
import { LIFECYCLE_DOC } from '../../scripts/subscriber-lifecycle.ts';

describe('the subscriber lifecycle table', () => {
  it('is what docs/subscriber-lifecycle.md shows (run `npx tsx scripts/subscriber-lifecycle.ts` after changing it)', async () => {
    expect(await readFile(LIFECYCLE_DOC, 'utf8')).toBe(lifecycleMarkdown());
  });

  it('lets nobody but the owner make a row active or bring it back from leaving', () => {
    const ownersOnly = new Set(['confirm-current', 'fresh-resubscribe', 'signup-single', 'signup-shared-single', 'import']);
    for (const state of STATES) {
      for (const event of EVENTS) {
        const { next: after } = next(state, event);
        const revived = after === 'active' && state !== 'active';
        if (revived && !ownersOnly.has(event)) throw new Error(`${event} makes ${state} active`);
        // Single mode's signup revives only what the reader themselves left (unsubscribed) or never finished.
        if (revived && (event === 'signup-single' || event === 'signup-shared-single')) expect(['none', 'pending', 'unsubscribed']).toContain(state);
        if (revived && event === 'import') expect(state).toBe('none');
      }
    }
  });

  it('mails a complained mailbox only what is asked for from its footer page, until its owner confirms from the inbox', () => {
    for (const state of ['complained', 'none-complained'] as const) {
      for (const event of EVENTS) {
        const { mail } = next(state, event);
        if (mail !== 'none' && !event.startsWith('footer-') && EVENT_TEXT[event].actor !== 'owner') throw new Error(`${event} mails a ${state} mailbox (${mail})`);
      }
    }
  });

  it('lets a link holder change nothing but unsubscribe', () => {
    for (const state of STATES) {
      for (const event of EVENTS.filter((e) => EVENT_TEXT[e].actor === 'link holder')) {
        const { next: after } = next(state, event);
        if (after !== state) expect(after, `${event} from ${state}`).toBe('unsubscribed');
      }
    }
  });
});
