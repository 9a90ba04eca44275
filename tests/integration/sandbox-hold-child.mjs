// Holds a real sandbox open until it is signalled, as a run does. Prints
// `opened <name>` once the container runs. Imports the built harness (dist/).
import { DockerSandbox } from '../../dist/plugins/sandbox-docker/sandbox.js';

const { spec, image, handleSignals } = JSON.parse(process.env.CHALK_TEST_CHILD);
const sandbox = new DockerSandbox({ image, tmpfsSize: '64m', telemetry: null, env: {}, handleSignals });
let signalled = false;
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => (signalled = true));
const session = await sandbox.open(spec);
process.stdout.write(`opened ${session.name}\n`);
// A long command in flight, like an agent call.
try {
  await session.exec('sleep 600');
  process.stdout.write('sleep returned\n');
} catch (err) {
  // The signal handler removes the container under the call, so the call may fail
  // before the handler exits: a run's edge then waits for that exit (cli/run-edge.ts),
  // and so does this child, instead of dying of the rejection with exit 1.
  if (!signalled) throw err;
  setInterval(() => undefined, 1_000);
}
