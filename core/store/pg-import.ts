/**
 * `pg`, imported without its Cloudflare Workers probe. At import pg 8 asks whether it runs in a
 * Worker; with no `navigator` (Node 20) it asks by constructing a `Response`, which loads Node's
 * whole fetch implementation: about a third of what importing pg costs, on every command that
 * opens the store (`chalk status` among them). Node 21 and later define `navigator.userAgent`
 * (`Node.js/<major>`), which answers the probe at once; on Node 20 the same answer is given for
 * the import and taken back after it.
 */
export async function importPg(): Promise<typeof import('pg').default> {
  const g = globalThis as { navigator?: unknown };
  const lend = g.navigator === undefined;
  if (lend) g.navigator = { userAgent: `Node.js/${process.versions.node.split('.')[0]}` };
  try {
    return (await import('pg')).default;
  } finally {
    if (lend) delete g.navigator;
  }
}
