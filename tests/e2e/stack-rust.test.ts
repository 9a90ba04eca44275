import { afterAll, beforeAll, describe, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import { e2eAvailable, type Rig, startRig } from './harness.js';
import { stackStory } from './stacks.js';

/** servo/rust-fnv (a Rust crate with no dependencies) through init, a detention, office hours and a request. */
const available = await e2eAvailable();

const HASH_STR = `
/// FNV hash of a string's UTF-8 bytes.
#[must_use]
pub fn fnv_hash_str(s: &str) -> u64 {
    fnv_hash(s.trim().as_bytes())
}
`;

const HASH_STR_TEST = `#[test]
fn hashes_the_whole_string() {
    assert_eq!(fnv::fnv_hash_str(" a"), fnv::fnv_hash(b" a"));
}
`;

describe.skipIf(!available)('a Rust crate, as it is', { timeout: 900_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('init finds cargo test and the rust toolchain; a failing test detains, office hours ends in a request', async () => {
    const times = await stackStory(rig, {
      bundle: 'rust-fnv.bundle',
      ticket: 'FNV-1',
      checkpoint: 'fnv_hash_str hashes a string, with a test',
      initSays: [
        '  found    Rust crate (Cargo.toml)',
        '  found    test command: cargo test (Cargo.toml)',
        '  found    toolchain: rust (Cargo.toml)',
        "  found    base branch: main (origin's HEAD)",
      ],
      broken: [
        s.bash(`cat >> /work/repo/lib.rs <<'EOF'\n${HASH_STR}EOF`),
        s.write('/work/repo/tests/hash_str.rs', HASH_STR_TEST),
      ],
      failingTest: 'hashes_the_whole_string',
      assertion: /assertion failed: `\(left == right\)`/,
      fix: { file: 'lib.rs', from: 's.trim().as_bytes()', to: 's.as_bytes()' },
      image: /^sandbox image chalk-sandbox:tc-[0-9a-f]{12}: toolchain rust from \.chalk\/config$/,
    });
    process.stdout.write(`rust story: detained in ${times.detainedMs} ms, request in ${times.requestMs} ms\n`);
  });
});
