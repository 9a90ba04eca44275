import { BUNDLE_MAX_BYTES, SANDBOX_PATHS, SandboxFileError, type SandboxSession } from '../ports/sandbox.js';
import { writeNewFile } from './host-file.js';

/**
 * The second half of `SandboxSession.exportBundle`, the same for every sandbox: the export
 * script has written the bundle at `SANDBOX_PATHS.outBundle`; it is read back through the
 * session's own capped `readFile` (a regular file only) and kept as a new host file at `dest`.
 */
export async function keepOutBundle(session: Pick<SandboxSession, 'readFile'>, dest: string): Promise<void> {
  const bytes = await session.readFile(SANDBOX_PATHS.outBundle, { maxBytes: BUNDLE_MAX_BYTES });
  if (bytes === null) throw new SandboxFileError('the sandbox wrote no bundle');
  writeNewFile(dest, bytes);
}
