/**
 * An error a user can cause and fix. The CLI prints its message as one line
 * (no stack trace) and exits non-zero. The message names what to change and
 * never carries a secret.
 */
export class UserError extends Error {
  override name = 'UserError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
