# Run as root: writes stdin to /chalk/$NAME (owned by root, mode 0644, so the
# agent can read it and not change it), replacing what was there.
set -euo pipefail
case "$NAME" in */* | .* | '') echo "bad name: $NAME" >&2; exit 2 ;; esac
tmp=$(mktemp /chalk/.put.XXXXXX)
cat >"$tmp"
chmod 0644 "$tmp"
mv -f -- "$tmp" "/chalk/$NAME"
