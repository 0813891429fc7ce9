#!/bin/sh
# scripts/duplicates.sh: counts the pairs of places in the tree that the
# `duplicates` command (the developers' tool library; not part of this
# repository) lists as sharing six or more lines and does not mark as
# boilerplate, twice:
#
#   as it is:        the tracked files as they are;
#   imports passed:  the same files with the lines of Go import blocks
#                    blanked (line numbers kept).
#
# The tool's README says it passes over import lines, but it only knows a line
# that starts with `import`: the lines inside Go's `import ( ... )` block
# count as code, so two files that import the same six standard packages in a
# row make a pair. The second count is the tool's own rule applied to Go.
# Usage: sh scripts/duplicates.sh [-v]   (-v lists the pairs of the second count)
set -eu

command -v duplicates >/dev/null 2>&1 || {
	echo "scripts/duplicates.sh: the duplicates command is not on PATH" >&2
	exit 2
}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git ls-files -z | xargs -0 cp --parents -t "$tmp"
find "$tmp" -name '*.go' -type f | while read -r f; do
	awk '/^import \($/ { blk = 1; print ""; next }
	     blk && /^\)$/ { blk = 0; print ""; next }
	     blk || /^import "/ { print ""; next }
	     { print }' "$f" >"$f.x" && mv "$f.x" "$f"
done

substantive() { grep '^D' | grep -v boilerplate || true; }
duplicates --most 200 --seconds 120 | substantive >"$tmp.raw"
(cd "$tmp" && duplicates --most 200 --seconds 120) | substantive >"$tmp.passed"
echo "pairs not marked boilerplate, as it is:       $(wc -l <"$tmp.raw")"
echo "pairs not marked boilerplate, imports passed: $(wc -l <"$tmp.passed")"
if [ "${1:-}" = -v ]; then
	cat "$tmp.passed"
fi
rm -f "$tmp.raw" "$tmp.passed"
