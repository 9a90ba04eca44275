// A run in miniature for the SIGTERM test: opens a real sandbox (whose signal
// handlers remove it on SIGTERM and exit 143) and makes one agent call that
// the scripted model keeps waiting. Imports the built harness (dist/).
import { ClaudeAgent } from '../../dist/core/agent/driver.js';
import { DockerSandbox } from '../../dist/plugins/sandbox-docker/sandbox.js';

const { spec, image, baseUrl } = JSON.parse(process.env.CHALK_TEST_CHILD);
const sandbox = new DockerSandbox({
  image,
  tmpfsSize: '256m',
  telemetry: null,
  env: { ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: 'sk-ant-test-dummy' },
});
const session = await sandbox.open(spec);
await session.clone();
await session.putFile('system.md', 'You are a scripted test agent.\n');
process.stdout.write(`opened ${session.name}\n`);
const agent = new ClaudeAgent({
  budgetUsd: '1.00',
  permissionMode: 'bypass',
  model: '',
  cheapModel: 'haiku',
  reviewModel: '',
});
// As the run loop does: shutdown aborts the call in flight, so it throws
// instead of coming back as an agent error to be recorded.
const shutdown = new AbortController();
process.once('SIGTERM', () => shutdown.abort(new Error('SIGTERM')));
try {
  const r = await agent.call('continue', 'wait for the model', {
    where: session,
    systemPromptFile: '/chalk/system.md',
    signal: shutdown.signal,
  });
  process.stdout.write(`returned ${r.status}\n`);
  await session.stop();
} catch (err) {
  process.stdout.write(`aborted: ${err.message}\n`);
  // The sandbox's signal handler removes the container and exits 143.
  await new Promise(() => {});
}
