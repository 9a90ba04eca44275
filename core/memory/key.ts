import { RECALL_QUERY_MAX, type RecallKey } from '../ports/lesson-memory.js';

/** What a loop that did not progress leaves for the next loop's recall. */
export interface LoopFailure {
  /** The lesson fingerprint of a failed rubric (sha256 of T and E), when it has one. */
  fingerprint: string | null;
  /** The first error of a failed rubric ('' or null when none was found). */
  firstError: string | null;
  /** The failing tests, null when unknown. */
  failingTests: string[] | null;
  /** The next loop's retry feedback. */
  feedback: string;
}

const cut = (text: string) => (text.length > RECALL_QUERY_MAX ? text.slice(0, RECALL_QUERY_MAX) : text);

/**
 * The recall key of a loop's prompt. No failure since the start or the last progress: `spec`
 * mode on the whole spec. A failure with a fingerprint or a first error: `failure` mode, the
 * query being the first error, a newline and the failing tests one per line. Any other failure:
 * `text` mode on the retry feedback. The query is cut to RECALL_QUERY_MAX characters.
 */
export function recallKey(o: { repo: string; spec: string; failure: LoopFailure | null }): RecallKey {
  const f = o.failure;
  const firstError = f?.firstError ? f.firstError : null;
  const fingerprint = f?.fingerprint ? f.fingerprint : null;
  if (!f) return { repo: o.repo, mode: 'spec', query: cut(o.spec), fingerprint: null, firstError: null };
  if (fingerprint || firstError) {
    const query = cut([firstError ?? '', ...(f.failingTests ?? [])].join('\n'));
    return { repo: o.repo, mode: 'failure', query, fingerprint, firstError: firstError && cut(firstError) };
  }
  return { repo: o.repo, mode: 'text', query: cut(f.feedback), fingerprint: null, firstError: null };
}
