import { inspectImage } from '../../plugins/sandbox-docker/image.js';
import { TEST_IMAGE } from './sandbox-helpers.js';

/** Whether the sandbox image the agent tests run in is built (in CI, .ci/setup.d builds it). */
export async function imagePresent(): Promise<boolean> {
  try {
    return (await inspectImage(TEST_IMAGE)) !== null;
  } catch {
    return false;
  }
}
