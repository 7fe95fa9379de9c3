// One Chromium for the run's browser tests: launching it costs seconds on a loaded machine, and
// each test file connects to this one instead (tests/support/browser.ts). Every page still gets a
// context of its own, so cookies, storage and cache never pass from one test to the next.
import { chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, chromiumAvailable } from '../support/chromium.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    chromiumEndpoint: string | null;
  }
}

export default async function setup(project: TestProject) {
  if (!chromiumAvailable) {
    project.provide('chromiumEndpoint', null);
    return;
  }
  const server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS, headless: true });
  project.provide('chromiumEndpoint', server.wsEndpoint());
  return () => server.close();
}
