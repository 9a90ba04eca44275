// One chalk process asking for the egress network (tests/integration/egress-network.test.ts):
// says `ready`, waits for the go file, then prints the id it got. Imports the built harness (dist/).
import { existsSync } from 'node:fs';
import { docker } from '../../dist/plugins/sandbox-docker/docker.js';
import { ensureNetwork } from '../../dist/plugins/sandbox-docker/egress/engine.js';

const [name, go] = process.argv.slice(2);
const d = await docker();
await d.ping();
process.stdout.write('ready\n');
while (!existsSync(go)) await new Promise((r) => setTimeout(r, 5));
process.stdout.write(`${await ensureNetwork(d, name)}\n`);
