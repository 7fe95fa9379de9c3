// Appends a dated section to bench/RESULTS.md with the machine and the exact command, so anyone
// can rerun a figure and compare.
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';

const RESULTS = new URL('../RESULTS.md', import.meta.url);
const HEADER = '# Benchmark results\n\nEach section is one run, newest last. Rerun any of them with the command it names.\n';

export function machine(): string {
  const cores = cpus();
  return `${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}`;
}

export async function appendResults(title: string, command: string, body: string): Promise<void> {
  const existing = await readFile(RESULTS, 'utf8').catch(() => '');
  if (!existing.startsWith('# Benchmark results')) await writeFile(RESULTS, HEADER);
  const section = `\n## ${title}\n\n- Date: ${new Date().toISOString()}\n- Machine: ${machine()}\n- Command: \`${command}\`\n\n${body.trim()}\n`;
  await appendFile(RESULTS, section);
  console.log(section);
}
