import { describe, expect, it } from 'vitest';
import { runPaths } from '../../core/layout.js';
import { ticketFromBranch } from '../../core/repo/git.js';
import { detentionBranch, epochBranch } from '../../core/run/base/detention-reasons.js';
import { openCheckpointsRefusal, sealRefusal } from '../../core/run/endings/submit.js';
import {
  cleanLesson,
  describeFix,
  distillStatus,
  FIX_DIFF_LINES,
  findDetentionCommit,
  gradingToRestore,
  interpretDistill,
  LESSON_MAX_CHARS,
  lessonLine,
  noteRefusal,
  officeHoursBranchRefusal,
} from '../../core/run/office-hours/office-hours-rules.js';
import { tutoringKeepReason } from '../../core/setup/cleanup.js';

describe('the fix as the distiller is told it', () => {
  it('finds the newest detention commit and counts the commits after it', () => {
    const log = [
      { sha: 'c3', subject: 'second fix' },
      { sha: 'c2', subject: 'fix: detention( is not a prefix here' },
      { sha: 'c1', subject: 'detention(SHOP-1): rubric failed (exit 1)' },
      { sha: 'c0', subject: 'detention(SHOP-1): an older one' },
    ];
    expect(findDetentionCommit(log)).toEqual({ sha: 'c1', since: 2 });
    expect(findDetentionCommit(log.slice(2))).toEqual({ sha: 'c1', since: 0 });
    expect(findDetentionCommit(log.slice(0, 2))).toBeNull();
    expect(findDetentionCommit([])).toBeNull();
  });

  it('says plainly when the detention commit is missing or nothing changed, and never shows a diff then', () => {
    const missing = describeFix({ kind: 'not-found' });
    expect(missing).toContain('detention commit is not on this branch');
    expect(missing).toContain('Go by the engineer note');
    const nothing = describeFix({ kind: 'unchanged' });
    expect(nothing).toContain('Nothing in the repository changed since the detention');
    expect(nothing).toContain('outside the repository');
    expect(nothing).not.toContain('Diffstat');
  });

  it('shows the diffstat and the diff, and says how much of a long diff it cut', () => {
    const short = describeFix({ kind: 'changed', commits: 1, stat: ' a.txt | 1 -', diff: '-x', lines: 1 });
    expect(short).toContain('1 commit since the detention');
    expect(short).toContain('Diffstat:\n a.txt | 1 -');
    expect(short).toContain('The whole diff (1 line):\n-x');
    const long = describeFix({ kind: 'changed', commits: 3, stat: 's', diff: 'd', lines: 1200 });
    expect(long).toContain('3 commits since the detention');
    expect(long).toContain(`The first ${FIX_DIFF_LINES} of its 1200 lines:`);
    expect(describeFix({ kind: 'changed', commits: 1, stat: '', diff: '', lines: 0 })).toContain('(no file changed)');
  });
});

describe("the distiller's answer", () => {
  it('keeps a lesson with its scope; any scope but general is this repository', () => {
    expect(interpretDistill({ lesson: 'When X, do Y, because Z.', scope: 'general' })).toEqual({
      source: 'distilled',
      lesson: 'When X, do Y, because Z.',
      scope: 'general',
    });
    expect(interpretDistill({ lesson: 'When X, do Y.', scope: 'repo' })).toMatchObject({ scope: 'repo' });
  });

  it('reads none, an empty lesson or the word none as no rule', () => {
    for (const a of [
      { lesson: 'When X, do Y.', scope: 'none' },
      { lesson: '   ', scope: 'general' },
      { lesson: 'None.', scope: 'repo' },
      { lesson: '\u001b[0m', scope: 'repo' },
    ]) {
      expect(interpretDistill(a)).toEqual({ source: 'none', lesson: null, scope: 'none' });
    }
  });

  it('treats anything off the schema as no answer (the note stays the fix, here only)', () => {
    for (const a of [
      null,
      undefined,
      'none',
      42,
      { lesson: 'x' },
      { lesson: 1, scope: 'repo' },
      { scope: 'all', lesson: 'x' },
    ]) {
      expect(interpretDistill(a)).toMatchObject({ source: 'failed', lesson: null, scope: 'repo' });
    }
  });

  it('strips control characters and escapes, flattens whitespace and caps the length', () => {
    expect(cleanLesson('a\u001b]0;title\u0007b\r\nc\u009b31m\td\u0000')).toBe('ab c d');
    const long = cleanLesson('y'.repeat(LESSON_MAX_CHARS * 3));
    expect(long).toHaveLength(LESSON_MAX_CHARS);
    expect(long.endsWith('…')).toBe(true);
  });

  it('tells the person what was recorded, and records ok only for a lesson', () => {
    const general = interpretDistill({ lesson: 'When X, do Y.', scope: 'general' });
    const repo = interpretDistill({ lesson: 'When X, do Y.', scope: 'repo' });
    const none = interpretDistill({ lesson: '', scope: 'none' });
    expect(lessonLine(general)).toBe('lesson: When X, do Y.');
    expect(lessonLine(repo)).toBe('lesson, recalled in this repository only: When X, do Y.');
    expect(lessonLine(none)).toMatch(
      /^no lesson distilled: .*your note is kept as the fix and recalled in this repository only$/,
    );
    expect(lessonLine({ source: 'off', lesson: null, scope: 'repo', why: 'CHALK_DISTILL is off' })).toBe(
      'no lesson distilled (CHALK_DISTILL is off): your note is kept as the fix and recalled in this repository only',
    );
    expect([general, repo, none].map(distillStatus)).toEqual(['ok', 'ok', 'none']);
  });
});

describe('branches and refusals', () => {
  it('names the tutoring branch after the ticket and the time, never one that exists', () => {
    expect(epochBranch('tutoring', { ticket: 'SHOP-7', epochSeconds: 1791171689.9, existing: [] })).toBe(
      'tutoring/SHOP-7-1791171689',
    );
    expect(
      epochBranch('tutoring', {
        ticket: 'SHOP-7',
        epochSeconds: 5,
        existing: ['tutoring/SHOP-7-5', 'refs/heads/tutoring/SHOP-7-5-2'],
      }),
    ).toBe('tutoring/SHOP-7-5-3');
    expect(detentionBranch('SHOP-7', 5, ['detention/SHOP-7-5'])).toBe('detention/SHOP-7-5-2');
  });

  it('reads the ticket of a tutoring branch as of its chalk/ one, so both share the state directory and status', () => {
    const env = { XDG_STATE_HOME: '/s' };
    for (const b of ['tutoring/SHOP-7-1791171689', 'tutoring/SHOP-7-1791171689-2', 'detention/SHOP-7-5']) {
      expect(ticketFromBranch(b)).toBe('SHOP-7');
      expect(runPaths('shop', ticketFromBranch(b) as string, env)).toEqual(runPaths('shop', 'SHOP-7', env));
    }
  });

  it('refuses office hours off a detention branch and without a note, naming what to do', () => {
    expect(officeHoursBranchRefusal('detention/SHOP-7-5')).toBeNull();
    expect(officeHoursBranchRefusal('tutoring/SHOP-7-5')).toMatch(
      /^chalk office-hours runs on a detention\/\* branch \(this is 'tutoring\/SHOP-7-5'\): git switch/,
    );
    expect(officeHoursBranchRefusal(null)).toContain("(this is 'a detached HEAD')");
    expect(officeHoursBranchRefusal('chalk/detention/SHOP-7')).not.toBeNull();
    expect(noteRefusal('fixed it')).toBeNull();
    expect(noteRefusal(' \n ')).toBe('a note is required: chalk office-hours -m "what was wrong and how you fixed it"');
    expect(noteRefusal(undefined)).not.toBeNull();
  });

  it('refuses submit with open checkpoints, counting them', () => {
    expect(openCheckpointsRefusal('specs/T-1.md', 0)).toBeNull();
    expect(openCheckpointsRefusal('specs/T-1.md', 1)).toBe(
      'specs/T-1.md has 1 open checkpoint; finish it (chalk run) or tick it, commit, then chalk submit',
    );
    expect(openCheckpointsRefusal('specs/T-1.md', 3)).toContain('has 3 open checkpoints; finish them');
  });

  it('keeps a tutoring branch in cleanup unless it is merged or pushed', () => {
    expect(tutoringKeepReason({ merged: true, pushed: false, base: 'main' })).toBeNull();
    expect(tutoringKeepReason({ merged: false, pushed: true, base: 'main' })).toBeNull();
    expect(tutoringKeepReason({ merged: false, pushed: false, base: 'trunk' })).toBe(
      'not merged into trunk and not pushed',
    );
  });
});

describe("office hours' guard and the seal", () => {
  it('puts back what the attempt changed unless the person changed it too, each path once', () => {
    expect(
      gradingToRestore({
        attempt: ['.chalk/config', '.github/workflows/chalk.yml', 'specs/A-1.md', '.chalk/config'],
        person: ['greet.sh', '.github/workflows/chalk.yml'],
      }),
    ).toEqual({ restore: ['.chalk/config', 'specs/A-1.md'], kept: ['.github/workflows/chalk.yml'] });
    expect(gradingToRestore({ attempt: [], person: ['x'] })).toEqual({ restore: [], kept: [] });
  });

  it('chalk submit takes only the commit the rubric and the review saw', () => {
    const head = 'a'.repeat(40);
    expect(sealRefusal('chalk/A-1', head, head)).toBeNull();
    expect(sealRefusal('chalk/A-1', head, null)).toMatch(
      /^no green rubric and review saw chalk\/A-1 as it is \(aaaaaaaaaaaa\); run chalk run/,
    );
    expect(sealRefusal('chalk/A-1', head, 'b'.repeat(40))).not.toBeNull();
  });
});
