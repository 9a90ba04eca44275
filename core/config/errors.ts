import { UserError } from '../errors.js';

/** Thrown for a bad value or a malformed config line: its message is the one line shown to the user. */
export class ConfigError extends UserError {
  override name = 'ConfigError';
}
