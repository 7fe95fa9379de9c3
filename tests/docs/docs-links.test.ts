// A newcomer follows the READMEs into docs/: every relative link there must lead somewhere, a file
// or folder that exists and, for `#anchor`, a heading of the target with GitHub's slug for it.
// The README stays short enough to read (<= 250 lines) and its configuration table names every
// variable .env.example documents.
import GithubSlugger from 'github-slugger';
import { marked, type Token, type Tokens } from 'marked';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every token of a markdown document, nested ones (in lists, tables, emphasis) included. */
function allTokens(tokens: Token[]): Token[] {
  return tokens.flatMap((token) => {
    const children: Token[] = [];
    if ('tokens' in token && Array.isArray(token.tokens)) children.push(...token.tokens);
    if (token.type === 'list') children.push(...(token as Tokens.List).items);
    if (token.type === 'table') {
      const table = token as Tokens.Table;
      for (const cell of [...table.header, ...table.rows.flat()]) children.push(...cell.tokens);
    }
    return [token, ...allTokens(children)];
  });
}

/** A heading's text as GitHub renders it (no backticks or emphasis marks), which its slug is made from. */
function plainText(tokens: Token[]): string {
  return tokens
    .map((token) => ('tokens' in token && Array.isArray(token.tokens) ? plainText(token.tokens) : 'text' in token ? String(token.text) : ''))
    .join('');
}

function anchorsOf(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const headings = allTokens(marked.lexer(markdown)).filter((token): token is Tokens.Heading => token.type === 'heading');
  return new Set(headings.map((heading) => slugger.slug(plainText(heading.tokens))));
}

function linksOf(markdown: string): string[] {
  return allTokens(marked.lexer(markdown))
    .filter((token): token is Tokens.Link | Tokens.Image => token.type === 'link' || token.type === 'image')
    .map((token) => token.href);
}

/** One line per relative link of `file` that leads nowhere. */
async function brokenLinks(file: string): Promise<string[]> {
  const problems: string[] = [];
  const name = relative(ROOT, file);
  for (const href of linksOf(await readFile(file, 'utf8'))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
    const [path = '', anchor] = href.split('#');
    const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    if (!existsSync(target)) {
      problems.push(`${name}: (${href}) leads to ${relative(ROOT, target)}, which does not exist`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!target.endsWith('.md')) {
      problems.push(`${name}: (${href}) has an anchor into a file that is not markdown`);
    } else if (!anchorsOf(await readFile(target, 'utf8')).has(anchor)) {
      problems.push(`${name}: (${href}) names no heading of ${relative(ROOT, target)}`);
    }
  }
  return problems;
}

async function documents(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, 'docs'))).filter((file) => file.endsWith('.md')).map((file) => join(ROOT, 'docs', file));
  return [join(ROOT, 'README.md'), join(ROOT, 'content', 'README.md'), ...docs];
}

describe('links in README.md, content/README.md and docs/', () => {
  it('all resolve: the file or folder exists, and an anchor names a heading of the target', async () => {
    const files = await documents();
    expect(files.length).toBeGreaterThan(3);
    const problems = (await Promise.all(files.map(brokenLinks))).flat();
    expect(problems).toEqual([]);
  });

  it('a missing file, a wrong anchor and an anchor into a non-markdown file are each reported', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'docs-links-'));
    try {
      await writeFile(join(dir, 'target.md'), '# Title\n\n## The operator’s `report` (daily)\n\n## Title\n');
      await writeFile(join(dir, 'data.txt'), 'plain');
      const page = join(dir, 'page.md');
      await writeFile(
        page,
        [
          '[ok](target.md#the-operators-report-daily) [second title](target.md#title-1) [self](#here) [web](https://example.com/x)',
          '',
          '## Here',
          '',
          '| a | b |',
          '|---|---|',
          '| [gone](missing.md) | [bad anchor](target.md#nowhere) |',
          '',
          '- [text anchor](data.txt#x)',
          '',
          '`[in code](missing-too.md)`',
        ].join('\n'),
      );
      const problems = await brokenLinks(page);
      expect(problems.map((problem) => problem.replace(/^.*?: /, ''))).toEqual([
        `(missing.md) leads to ${relative(ROOT, join(dir, 'missing.md'))}, which does not exist`,
        `(target.md#nowhere) names no heading of ${relative(ROOT, join(dir, 'target.md'))}`,
        '(data.txt#x) has an anchor into a file that is not markdown',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('README.md', () => {
  it('is at most 250 lines', async () => {
    const lines = (await readFile(join(ROOT, 'README.md'), 'utf8')).trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(250);
  });

  it("names every variable of .env.example in its configuration table", async () => {
    const example = await readFile(join(ROOT, '.env.example'), 'utf8');
    const variables = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]!);
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
    expect(variables.length).toBeGreaterThan(20);
    expect(variables.filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});
