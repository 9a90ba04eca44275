#!/usr/bin/env bash
# Debian's Chromium (and a font for its text) for the dashboard browser test
# (tests/integration/dashboard-browser.test.ts), driven by playwright-core at /usr/bin/chromium.
# Playwright never downloads a browser here.
set -euo pipefail
need=()
for pkg in chromium fonts-liberation; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
test -x /usr/bin/chromium
