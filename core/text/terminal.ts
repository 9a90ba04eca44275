import { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/*
 * Text from a repository or a sandbox is hostile: an agent's summary, a test
 * name or a branch name can carry escape sequences that clear the screen, move
 * the cursor over earlier lines, set the window title or hide what follows.
 * Everything Chalk prints to a terminal passes through `forTerminal` once, in
 * the channel that prints it (ConsoleLog, and the CLI's stdout and stderr).
 */

const ESC = '\\u001b';
/** CSI: ESC [ or the 8-bit CSI, parameter bytes, intermediate bytes, one final byte. */
const CSI = `(?:${ESC}\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]`;
/**
 * String controls (OSC, DCS, SOS, PM, APC; 7- or 8-bit) up to their terminator: BEL or ST
 * (ESC \ or the 8-bit ST). One without a terminator is not swallowed: its introducer is
 * stripped below and the rest stays visible.
 */
const STRING = `(?:${ESC}[\\]PX^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[^\\u0007\\u001b\\u009c]*(?:\\u0007|${ESC}\\\\|\\u009c)`;
/** Any other escape sequence: ESC, intermediate bytes, one final byte (ESC c resets the terminal). */
const OTHER_ESCAPE = `${ESC}[\\u0020-\\u002f]*[\\u0030-\\u007e]`;
/** What is left: C0 controls but tab and newline (carriage return included), DEL, C1 controls. */
const CONTROL = '[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]';

const UNSAFE = new RegExp(`${CSI}|${STRING}|${OTHER_ESCAPE}|${CONTROL}`, 'g');

/** True when the text holds any control character at all (C0, DEL, C1), newline and tab included. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/**
 * The text with every control character and escape sequence removed, newlines and tabs kept.
 * The result holds no C0 control but tab and newline, no DEL and no C1 control.
 */
export function forTerminal(text: string): string {
  return text.replace(UNSAFE, '');
}

/**
 * A stream that writes `forTerminal` of everything written to it into `target`,
 * at once and in order (bytes are decoded as UTF-8 across writes, so a character
 * split between two writes is kept whole).
 */
export class TerminalStream extends Writable {
  readonly isTTY: boolean;
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly target: NodeJS.WritableStream & { isTTY?: boolean }) {
    super({ decodeStrings: false });
    this.isTTY = target.isTTY === true;
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (text !== '') this.target.write(forTerminal(text));
    done();
  }

  override _final(done: (err?: Error | null) => void): void {
    const rest = this.decoder.end();
    if (rest !== '') this.target.write(forTerminal(rest));
    done();
  }
}
