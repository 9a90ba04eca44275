// Holds a real sandbox open until it is signalled, as a run does. Prints
// `opened <name>` once the container runs. Imports the built harness (dist/).
import { DockerSandbox } from '../../dist/plugins/sandbox-docker/sandbox.js';

const { spec, image, handleSignals } = JSON.parse(process.env.CHALK_TEST_CHILD);
const sandbox = new DockerSandbox({ image, tmpfsSize: '64m', telemetry: null, env: {}, handleSignals });
const session = await sandbox.open(spec);
process.stdout.write(`opened ${session.name}\n`);
// A long command in flight, like an agent call.
await session.exec('sleep 600');
process.stdout.write('sleep returned\n');
