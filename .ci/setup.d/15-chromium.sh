#!/usr/bin/env bash
# Debian's Chromium for the dashboard browser test (tests/integration/dashboard-browser.test.ts),
# driven by playwright-core at /usr/bin/chromium. Playwright never downloads a browser here.
set -euo pipefail
if ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q 'install ok installed'; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
test -x /usr/bin/chromium
