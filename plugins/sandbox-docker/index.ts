import { type Plugin, Tokens } from '../../core/plugin.js';
import { sandboxChecks } from './checks.js';
import { SANDBOX_COMMANDS } from './commands.js';
import { SANDBOX_PLUGIN_KEYS } from './keys.js';
import { DockerSandbox } from './sandbox.js';

/**
 * The Sandbox port on the Docker engine. dockerode itself is imported only
 * when a sandbox is first used, so booting the kernel stays cheap.
 */
const plugin: Plugin = {
  name: 'sandbox-docker',
  configuration: SANDBOX_PLUGIN_KEYS,
  commands: SANDBOX_COMMANDS,
  register(kernel) {
    let sandbox: DockerSandbox | undefined;
    const get = () => {
      sandbox ??= DockerSandbox.fromConfig(kernel.config, kernel.log);
      return sandbox;
    };
    kernel.bind(Tokens.Sandbox, { useFactory: get });
    kernel.checks.push(...sandboxChecks(kernel.config, get));
  },
};
export default plugin;
