#!/usr/bin/env bash
# The egress image (share/egress: Squid, the daemon from dist/, on the sandbox image's base),
# built once here so no test waits for it; a run builds it on first need otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
node dist/cli/chalk.cjs sandbox build
