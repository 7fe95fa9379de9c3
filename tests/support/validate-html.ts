// The Nu HTML checker (vnu-jar, the W3C validator) over one page, where Java is installed.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const vnuJar: string = createRequire(import.meta.url)('vnu-jar');

export const htmlValidatorAvailable = await run('java', ['-version']).then(
  () => true,
  () => false,
);

/** The checker's errors about `html` (empty when it is valid). */
export async function htmlErrors(html: string): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'lw-vnu-'));
  try {
    const file = join(dir, 'page.html');
    await writeFile(file, html);
    const check = await run('java', ['-jar', vnuJar, '--errors-only', '--format', 'json', file]).catch((error: { stderr?: string }) => ({ stderr: error.stderr ?? '' }));
    const messages = (JSON.parse(check.stderr || '{"messages":[]}') as { messages: { type: string; subType?: string; message: string }[] }).messages;
    return messages.filter((message) => message.type === 'error' || message.subType === 'fatal').map((message) => message.message);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
