import { createHash } from 'node:crypto';

/** What `git hash-object --stdin` prints for this text in a SHA-1 repository, computed without git. */
export function gitBlobHash(text: string | Buffer): string {
  const body = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return createHash('sha1').update(`blob ${body.length}\0`).update(body).digest('hex');
}
