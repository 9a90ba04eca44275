import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConsoleLog } from '../../core/kernel/console-log.js';
import { forTerminal, hasControlCharacter, TerminalStream } from '../../core/text/terminal.js';

const ESC = '\u001b';
const BEL = '\u0007';

/** Nothing a terminal acts on: no C0 control but tab and newline, no DEL, no C1 control. */
const actedOn = (s: string) =>
  [...s].filter((c) => {
    const cp = c.codePointAt(0) ?? 0;
    return (cp < 0x20 && c !== '\t' && c !== '\n') || (cp >= 0x7f && cp <= 0x9f);
  });

const collect = () => {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
};

describe('forTerminal', () => {
  it.each([
    ['plain text is kept', 'loop 3: 2 of 5 checkpoints ticked', 'loop 3: 2 of 5 checkpoints ticked'],
    ['newlines and tabs are kept', 'a\tb\nc\n', 'a\tb\nc\n'],
    ['unicode is kept', 'é – ünïcode ✓ 日本', 'é – ünïcode ✓ 日本'],
    ['a colour is removed whole', `${ESC}[31mred${ESC}[0m text`, 'red text'],
    ['clear screen and cursor home', `${ESC}[2J${ESC}[Hfake prompt`, 'fake prompt'],
    ['cursor up and erase line hide an earlier line', `ok${ESC}[1A${ESC}[2Kall tests passed`, 'okall tests passed'],
    ['a private-mode CSI (hide cursor)', `${ESC}[?25lgone`, 'gone'],
    ['an 8-bit CSI', '\u009b2Jx', 'x'],
    ['window title by OSC ended with BEL', `${ESC}]0;pwned${BEL}after`, 'after'],
    ['window title by OSC ended with ST', `${ESC}]2;pwned${ESC}\\after`, 'after'],
    [
      'a hyperlink OSC 8 keeps its visible text',
      `${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\`,
      'click',
    ],
    ['an 8-bit OSC ended with 8-bit ST', '\u009d0;t\u009cafter', 'after'],
    ['a DCS string', `${ESC}Pq#0;2;0;0;0${ESC}\\after`, 'after'],
    ['an unterminated OSC does not swallow what follows', `${ESC}]0;title\nnext line`, '0;title\nnext line'],
    ['terminal reset ESC c', `${ESC}cclean`, 'clean'],
    ['charset switch ESC ( 0', `${ESC}(0lqk`, 'lqk'],
    ['save and restore cursor', `${ESC}7x${ESC}8`, 'x'],
    ['a lone ESC at the end', `text${ESC}`, 'text'],
    ['carriage return cannot overwrite a printed line', 'FAILED\rPASSED', 'FAILEDPASSED'],
    ['CRLF becomes LF', 'a\r\nb\r\n', 'a\nb\n'],
    ['backspaces cannot erase', 'FAIL\b\b\b\bPASS', 'FAILPASS'],
    ['BEL, NUL, vertical tab, form feed, DEL', `a${BEL}b\u0000c\u000bd\u000ce\u007ff`, 'abcdef'],
    ['C1 controls (NEL, IND, RI)', 'a\u0085b\u0084c\u008dd', 'abcd'],
    ['a CSI broken by a newline leaves no ESC', `${ESC}[1\n2J`, '1\n2J'],
  ])('%s', (_name, input, expected) => {
    expect(forTerminal(input)).toBe(expected);
  });

  it('leaves nothing a terminal acts on, whatever the input, and is idempotent', () => {
    // Every code point from 0 to 0x2ff in many orders and cuts, mixed with escape introducers.
    const pieces = [ESC, '[', ']', '\\', BEL, '\u009b', '\u009c', '\u009d', '\r', '\n', ';', '0', 'm', 'P'];
    for (let cp = 0; cp < 0x300; cp++) pieces.push(String.fromCodePoint(cp));
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    for (let n = 0; n < 2000; n++) {
      let s = '';
      for (let i = next() % 40; i > 0; i--) s += pieces[next() % pieces.length];
      const out = forTerminal(s);
      expect(actedOn(out)).toEqual([]);
      expect(forTerminal(out)).toBe(out);
    }
  });
});

describe('hasControlCharacter', () => {
  it.each([
    ['Add the basket', false],
    ['é – ünïcode ✓', false],
    ['two\nlines', true],
    ['a\ttab', true],
    ['a\rreturn', true],
    [`an ${ESC}[31m escape`, true],
    ['a DEL\u007f', true],
    ['a C1 \u0085 NEL', true],
  ])('%j: %s', (text, expected) => {
    expect(hasControlCharacter(text)).toBe(expected);
  });
});

describe('TerminalStream', () => {
  it('strips what passes through, in order and at once', () => {
    const target = collect();
    const stream = new TerminalStream(target.stream);
    stream.write(`${ESC}]0;title${BEL}first\n`);
    expect(target.text()).toBe('first\n');
    stream.write(Buffer.from(`${ESC}[2Jsecond\r\n`));
    expect(target.text()).toBe('first\nsecond\n');
  });

  it('keeps a character split between two writes whole, and strips a split C1 control', () => {
    const target = collect();
    const stream = new TerminalStream(target.stream);
    const bytes = Buffer.from('é\u009b2J!', 'utf8');
    for (const b of bytes) stream.write(Buffer.from([b]));
    stream.end();
    expect(target.text()).toBe('é2J!');
  });

  it('tells whether its target is a terminal', () => {
    const tty = Object.assign(collect().stream, { isTTY: true });
    expect(new TerminalStream(tty).isTTY).toBe(true);
    expect(new TerminalStream(collect().stream).isTTY).toBe(false);
  });
});

describe('ConsoleLog', () => {
  it('strips what the message carries and then adds its own colour', () => {
    const out = collect();
    const err = collect();
    const log = new ConsoleLog({ out: out.stream, err: err.stream, color: true }).child('[SHOP-1] ');
    log.info(`agent: ${ESC}[2Jdone\rall good${ESC}]0;owned${BEL}`);
    log.warn(`blocked:${ESC}[8m hidden\nsecond line`);
    expect(out.text()).toBe('[SHOP-1] agent: doneall good\n');
    expect(err.text()).toBe(`[SHOP-1] ${ESC}[33mwarning:${ESC}[0m blocked: hidden\n[SHOP-1]   | second line\n`);
  });
});
