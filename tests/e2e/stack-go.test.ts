import { afterAll, beforeAll, describe, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import { e2eAvailable, type Rig, startRig } from './harness.js';
import { stackStory } from './stacks.js';

/** google/uuid (Go, no dependencies, on `master`) through init, a detention, office hours and a request. */
const available = await e2eAvailable();

const VERSION_NAME = (word: string) => `package uuid

// VersionName is the RFC 9562 name of a version: "random" for 4, "time-ordered" for 7.
func VersionName(v Version) string {
	switch v {
	case 4:
		return "${word}"
	case 7:
		return "time-ordered"
	}
	return v.String()
}
`;

const VERSION_NAME_TEST = `package uuid

import "testing"

func TestVersionName(t *testing.T) {
	if got := VersionName(4); got != "random" {
		t.Errorf("VersionName(4) = %q, want %q", got, "random")
	}
}
`;

describe.skipIf(!available)('a Go module, as it is', { timeout: 900_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('init finds go test on master and the go toolchain; a failing test detains, office hours ends in a request', async () => {
    const times = await stackStory(rig, {
      bundle: 'uuid.bundle',
      ticket: 'UUID-1',
      checkpoint: 'VersionName names versions 4 and 7, with a test',
      initSays: [
        '  found    Go module (go.mod)',
        '  found    test command: go test ./... (go.mod)',
        '  found    toolchain: go (go.mod)',
        "  found    base branch: master (origin's HEAD)",
      ],
      broken: [
        s.write('/work/repo/version_name.go', VERSION_NAME('Random')),
        s.write('/work/repo/version_name_test.go', VERSION_NAME_TEST),
      ],
      failingTest: 'TestVersionName',
      assertion: /VersionName\(4\) = "Random", want "random"/,
      fix: { file: 'version_name.go', from: 'return "Random"', to: 'return "random"' },
      image: /^sandbox image chalk-sandbox:tc-[0-9a-f]{12}: toolchain go from \.chalk\/config$/,
    });
    process.stdout.write(`go story: detained in ${times.detainedMs} ms, request in ${times.requestMs} ms\n`);
  });
});
