// What every entry point (server, digest CLI) does first: read .env in development, parse the
// configuration, and stop with one line per problem when it is wrong; then open the store.
import { ConfigError, parseConfig, type Config } from './config.ts';
import type { Store } from './store/types.ts';

/** Development convenience: a .env file in the working directory. Production and tests take the real environment. */
export function readDotEnv(): void {
  if (process.env.NODE_ENV === 'production' || process.env.NODE_ENV === 'test') return;
  try {
    process.loadEnvFile('.env');
  } catch {
    // No .env: the environment alone.
  }
}

/** The parsed configuration, or an exit with status 1 after saying what to fix, never a stack trace. */
export async function configOrExit(whoCannotRun: string): Promise<Config> {
  try {
    return await parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`${whoCannotRun}. Fix these environment variables:\n${error.problems.map((p) => `  - ${p}`).join('\n')}`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * The configured store, or an exit with status 1 when another process owns the embedded database
 * (one line saying so). Any other failure is thrown: the caller knows how to word it.
 */
export async function storeOrExit(config: Config): Promise<Store> {
  const { openStore, StoreLockedError } = await import('./store/index.ts');
  try {
    return await openStore(config.store);
  } catch (error) {
    if (error instanceof StoreLockedError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}
