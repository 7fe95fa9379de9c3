// The end-to-end and server tests run against the production build, as readers get it. Build
// once per run when it is missing or older than the sources (scripts/ensure-build.ts decides).
import { execFileSync } from 'node:child_process';

export default function setup() {
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/ensure-build.ts', '--quiet'], { stdio: 'inherit' });
}
