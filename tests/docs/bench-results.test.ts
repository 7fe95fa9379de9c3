// bench/RESULTS.md keeps one current section per benchmark: a rerun replaces, never appends.
import { describe, expect, it } from 'vitest';
import { replaceSection, splitSections } from '../../bench/support/results.ts';

const file = `# Benchmark results

Intro.

## Digest

- Date: old

| a | 1 |

### Reading the old digest run

Old analysis.

## Signup

- Date: old signup

# Notes from earlier runs

## Digest: an analysis

Kept as written.
`;

describe('bench results file', () => {
  it('replaces the section of the same title in place, with its subsections', () => {
    const next = replaceSection(file, 'Digest', '## Digest\n\n- Date: new\n\n| a | 2 |\n');
    const current = next.slice(0, next.indexOf('# Notes from earlier runs'));
    expect(splitSections(current).sections.map((section) => section.title)).toEqual(['Digest', 'Signup']);
    expect(next).toContain('| a | 2 |');
    expect(next).not.toContain('| a | 1 |');
    expect(next).not.toContain('Old analysis.');
    expect(next).toContain('- Date: old signup');
  });

  it('adds a new benchmark at the end of the current sections and leaves the notes alone', () => {
    const next = replaceSection(file, 'Report', '## Report\n\n- Date: now\n');
    const titles = splitSections(next.slice(0, next.indexOf('# Notes from earlier runs'))).sections.map((section) => section.title);
    expect(titles).toEqual(['Digest', 'Signup', 'Report']);
    expect(next.endsWith('## Digest: an analysis\n\nKept as written.\n')).toBe(true);
  });

  it('keeps only the current table of each benchmark in the committed file: one section per title, each with its date, machine and exact command', async () => {
    const { readFile } = await import('node:fs/promises');
    const committed = await readFile(new URL('../../bench/RESULTS.md', import.meta.url), 'utf8');
    expect(committed.split('\n').length).toBeLessThanOrEqual(300);
    expect(committed).not.toContain('# Notes from earlier runs');
    const { sections } = splitSections(committed);
    const titles = sections.map((section) => section.title);
    expect(titles.length).toBeGreaterThan(5);
    expect(new Set(titles).size).toBe(titles.length);
    const incomplete = sections
      .filter((section) => !(/^- Date: \S+$/m.test(section.text) && /^- Machine: .+$/m.test(section.text) && /^- Command: `[^`]+`/m.test(section.text)))
      .map((section) => section.title);
    expect(incomplete).toEqual([]);
  });
});
