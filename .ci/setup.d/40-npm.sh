#!/usr/bin/env bash
# npm ci also builds dist/ through the prepare script.
set -euo pipefail
npm ci --no-audit --no-fund
