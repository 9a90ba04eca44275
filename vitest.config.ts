import { defineConfig } from 'vitest/config';

/**
 * Four tiers, each a vitest project (`npx vitest run --project unit`):
 * - unit: pure logic, no process, no engine, no build (`npm run test:unit`);
 * - inprocess: `runTicket` and office hours through `chalk-harness/testing`, real git, no engine;
 * - integration: the real thing one piece at a time (git, Docker, Postgres and PGlite, the claude CLI);
 * - e2e: the built `chalk` CLI end to end, with the real claude CLI in a real sandbox.
 * Only the tiers that spawn the built CLI build dist/ first (tests/global-setup.ts), and only when one
 * of their files is queued, so `npx vitest run tests/unit/spec.test.ts` starts at once.
 */
// The CommonJS sources (cli/chalk.cts and what it requires, core/state-dir.cts) are TypeScript too:
// vite strips types from .ts and .mts alone unless told.
const oxc = { include: /\.(m?ts|cts|[jt]sx)$/ };

const shared = {
  setupFiles: ['tests/setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    projects: [
      // Pure logic shares one module graph per worker (no file reloads Chalk's modules): most of
      // the tier's time was imports. Nothing here mocks a module; env stubs are undone per test.
      { oxc, test: { ...shared, name: 'unit', include: ['tests/unit/**/*.test.ts'], isolate: false } },
      { oxc, test: { ...shared, name: 'inprocess', include: ['tests/inprocess/**/*.test.ts'] } },
      {
        oxc,
        test: {
          ...shared,
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          globalSetup: ['tests/global-setup.ts'],
        },
      },
      {
        oxc,
        test: { ...shared, name: 'e2e', include: ['tests/e2e/**/*.test.ts'], globalSetup: ['tests/global-setup.ts'] },
      },
    ],
  },
});
