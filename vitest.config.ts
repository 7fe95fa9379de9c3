import { defineConfig, mergeConfig } from 'vitest/config';
import viteConfig from './vite.config.ts';

export default mergeConfig(
  viteConfig,
  defineConfig({
    test: {
      include: ['{bin,content,client,server,emails,jobs,scripts,tests}/**/*.test.{ts,tsx}'],
      globalSetup: ['tests/setup/build.ts', 'tests/setup/postgres.ts'],
      // A test that starts its own embedded database needs ~3 s on a quiet machine and over 30 s on
      // a loaded one; the limit catches hangs, not slowness (speed lives in bench/).
      testTimeout: 90_000,
      hookTimeout: 120_000,
      // Two cores: one file per core keeps browser and database tests from starving each other.
      maxWorkers: 2,
      env: { NODE_ENV: 'test' },
      // CI reads a plain 'N passed, N failed' line that .ci/run prints from this file.
      reporters: process.env.CI ? ['default', ['json', { outputFile: '.tmp/vitest-results.json' }]] : ['default'],
    },
  }),
);
