// Keeps bench/RESULTS.md at one current section per benchmark: a run replaces the section of the
// same title (its figures, date, machine and exact command) instead of appending another, so the
// top of the file is always what holds now. Earlier figures stay in git history; written analyses
// live under "# Notes from earlier runs" and are never rewritten by a run.
import { readFile, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';

const RESULTS = new URL('../RESULTS.md', import.meta.url);
const HEADER =
  '# Benchmark results\n\nOne current section per benchmark: a run replaces its own section. Rerun any of them with the command it names; earlier figures are in git history.\n';
const NOTES_HEADING = '\n# Notes from earlier runs\n';

export function machine(): string {
  const cores = cpus();
  return `${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}`;
}

/** Splits markdown into its leading text and its `## ` sections (each with its `###` subsections). */
export function splitSections(markdown: string): { head: string; sections: { title: string; text: string }[] } {
  const parts = markdown.split(/\n(?=## )/);
  const head = parts.shift() ?? '';
  const sections = parts.map((text) => ({ title: text.slice(3, text.indexOf('\n') === -1 ? undefined : text.indexOf('\n')).trim(), text: text.trimEnd() }));
  return { head: head.trimEnd(), sections };
}

/** The file with `section` in place of every current section titled `title` (added at the end if new). */
export function replaceSection(existing: string, title: string, section: string): string {
  const notesAt = existing.indexOf(NOTES_HEADING);
  const current = notesAt === -1 ? existing : existing.slice(0, notesAt);
  const notes = notesAt === -1 ? '' : existing.slice(notesAt);
  const { head, sections } = splitSections(current.startsWith('# Benchmark results') ? current : HEADER);
  const firstMatch = sections.findIndex((entry) => entry.title === title);
  const kept = sections.filter((entry) => entry.title !== title);
  const next = { title, text: section.trimEnd() };
  kept.splice(firstMatch === -1 ? kept.length : firstMatch, 0, next);
  return `${head}\n\n${kept.map((entry) => entry.text).join('\n\n')}\n${notes}`;
}

export async function recordResults(title: string, command: string, body: string): Promise<void> {
  const existing = await readFile(RESULTS, 'utf8').catch(() => HEADER);
  const section = `## ${title}\n\n- Date: ${new Date().toISOString()}\n- Machine: ${machine()}\n- Command: \`${command}\`\n\n${body.trim()}\n`;
  await writeFile(RESULTS, replaceSection(existing, title, section));
  console.log(`\n${section}`);
}
