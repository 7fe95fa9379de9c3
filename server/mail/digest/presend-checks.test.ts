import { describe, expect, it } from 'vitest';
import { recaps } from '../../../content/index.ts';
import { checkRecap } from './presend.ts';
import { MAX_HTML_BYTES, presendRefusal, runPresendChecks, type PresendCopy } from './presend-checks.ts';

const recap = { date: '2025-07-14', path: '/weekly-recap-july-14', entries: [{ rank: 1, url: 'https://launched.lovable.app/products/flowjoinery' }, { rank: 2, url: 'https://launched.lovable.app/products/querycanary' }] };

const copy = (overrides: Partial<PresendCopy> = {}): PresendCopy => ({
  recap,
  subject: 'Week of July 14, 2025: Data & Automation Tools',
  html: `<html><body><a href="https://launched.lovable.app/products/flowjoinery?utm_source=x&amp;utm_medium=email">F</a>
    <a href="https://launched.lovable.app/products/querycanary">Q</a><a href="https://launchedweekly.com/unsubscribe?token=a.b">Unsubscribe</a></body></html>`,
  text: 'Flowjoinery https://launched.lovable.app/products/flowjoinery?utm_source=x\nQuerycanary (https://launched.lovable.app/products/querycanary).\n',
  siteUrl: 'https://launchedweekly.com',
  production: true,
  ...overrides,
});

const byId = (results: ReturnType<typeof runPresendChecks>) => Object.fromEntries(results.map((r) => [r.id, r]));

describe('pre-send checks', () => {
  it('pass a well-formed copy', () => {
    const results = runPresendChecks(copy());
    expect(results.map((r) => [r.id, r.status])).toEqual([
      ['size', 'pass'],
      ['links', 'pass'],
      ['subject', 'pass'],
      ['text', 'pass'],
    ]);
    expect(presendRefusal('Week of July 14, 2025', results)).toBeNull();
  });

  it('refuse HTML over the clipping size minus the margin, and say by how much to shorten', () => {
    const padding = 'x'.repeat(MAX_HTML_BYTES);
    const size = byId(runPresendChecks(copy({ html: `${copy().html}<p>${padding}</p>` }))).size!;
    expect(size.status).toBe('fail');
    expect(size.detail).toMatch(/Gmail clips at 102\.0 KB/);
    expect(size.fix).toMatch(/content\/recaps\/2025-07-14\.ts by at least \d+\.\d KB/);
    expect(byId(runPresendChecks(copy({ html: `<p>${'x'.repeat(MAX_HTML_BYTES - 7)}</p>` }))).size!.status).toBe('pass');
  });

  it('refuse relative, http, local and example links in production', () => {
    for (const href of ['/weekly-recap-july-14', 'http://launched.lovable.app/products/x', 'https://localhost:3000/x', 'https://www.example.com/x', 'https://shop.test/x']) {
      const links = byId(runPresendChecks(copy({ html: `${copy().html}<a href="${href}">x</a>` }))).links!;
      expect(links.status, href).toBe('fail');
      expect(links.detail, href).toContain(href);
    }
  });

  it('let the site’s own http://localhost links through in development, but not other local ones', () => {
    const dev = { siteUrl: 'http://localhost:3000', production: false };
    const ok = copy({ ...dev, html: `${copy().html}<a href="http://localhost:3000/weekly-recap-july-14">web</a>` });
    expect(byId(runPresendChecks(ok)).links!.status).toBe('pass');
    const other = copy({ ...dev, html: `${copy().html}<a href="http://localhost:8080/x">x</a>` });
    expect(byId(runPresendChecks(other)).links!.status).toBe('fail');
  });

  it('warn, not refuse, on a subject over 78 characters', () => {
    const results = runPresendChecks(copy({ subject: 'A'.repeat(79) }));
    expect(byId(results).subject!.status).toBe('warn');
    expect(presendRefusal('Week of July 14, 2025', results)).toBeNull();
  });

  it('refuse a missing text part or one without a product link, naming the recap, check and fix', () => {
    expect(byId(runPresendChecks(copy({ text: '  ' }))).text!.status).toBe('fail');
    const results = runPresendChecks(copy({ text: 'Flowjoinery https://launched.lovable.app/products/flowjoinery\n' }));
    const text = byId(results).text!;
    expect(text.status).toBe('fail');
    expect(text.detail).toContain('https://launched.lovable.app/products/querycanary');
    const message = presendRefusal('Week of July 14, 2025', results)!;
    expect(message).toMatch(/^Week of July 14, 2025 failed the pre-send check\./);
    expect(message).toContain('Text part carries every product link');
    expect(message).toContain('Fix: ');
  });

  it("count a launch linked through the site's /go/ link as present in the text part, and not another week's", () => {
    const go = 'Flowjoinery https://launchedweekly.com/go/weekly-recap-july-14/1\nQuerycanary https://launchedweekly.com/go/weekly-recap-july-14/2\n';
    expect(byId(runPresendChecks(copy({ text: go }))).text!.status).toBe('pass');
    const otherWeek = byId(runPresendChecks(copy({ text: go.replace('july-14/2', 'july-6/2') }))).text!;
    expect(otherWeek.status).toBe('fail');
    expect(otherWeek.detail).toContain('https://launched.lovable.app/products/querycanary');
  });

  it('pass every recap in content/ as rendered for production', async () => {
    for (const real of recaps) {
      const results = await checkRecap(real, 'https://launchedweekly.com', true);
      expect(results.filter((r) => r.status === 'fail'), real.date).toEqual([]);
    }
  });
});
