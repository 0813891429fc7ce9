#!/usr/bin/env bash
# Fetch the console's one vendored library again from the npm registry and check it is the file in the repository
# (docs/console.md). Usage: console/vendor.sh [--update]
set -euo pipefail
cd "$(dirname "$0")"
version=2.0.4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "qrcode-generator@$version" >/dev/null && tar xzf "qrcode-generator-$version.tgz")
if [ "${1:-}" = --update ]; then
	cp "$tmp/package/dist/qrcode.mjs" assets/vendor/qrcode.mjs
	sha256sum assets/vendor/qrcode.mjs | awk '{print $1}' >vendor-qrcode.mjs.sha256
fi
if cmp -s "$tmp/package/dist/qrcode.mjs" assets/vendor/qrcode.mjs; then
	echo "assets/vendor/qrcode.mjs is qrcode-generator@$version's dist/qrcode.mjs"
else
	echo "assets/vendor/qrcode.mjs differs from qrcode-generator@$version's dist/qrcode.mjs" >&2
	exit 1
fi
