#!/bin/sh
# third_party/ as a verified patch series (third_party/README.md): each patched copy is its upstream release, as
# `go mod download` gives it, with the patches of third_party/patches/<library>/ applied in order.
#
#   sh scripts/third_party.sh check         (the default; `make third-party-check`, part of `make test`)
#       Downloads the pristine releases, applies the patches to a temporary copy and fails on any difference
#       from the copy in third_party/ (a file added, removed or changed; nothing is excluded), then checks that
#       every Go file there carries an MPL-2.0 notice and that go.mod requires the releases patched.
#   sh scripts/third_party.sh apply         Rewrites third_party/<library>/ as release + patches (after a
#                                           patch was changed, or the release below was raised).
#   sh scripts/third_party.sh series DIR    A git repository per library in DIR/<library>: the release as its
#                                           first commit, then one commit per patch (git am), to edit the
#                                           series; write it back with
#                                           git -C DIR/<library> format-patch --zero-commit --no-signature \
#                                             -o "$PWD/third_party/patches/<library>" HEAD~N
#                                           (N patches; remove the old files first), then `apply`.
set -eu

# The patched releases: module path, version, directory in third_party/ and in third_party/patches/.
LIBRARIES="github.com/hashicorp/go-immutable-radix@v1.3.1:go-immutable-radix
github.com/hashicorp/go-memdb@v1.3.5:go-memdb"

cd "$(dirname "$0")/.."
root=$(pwd)
cmd=${1:-check}
case $cmd in
check | apply) ;;
series) [ $# -eq 2 ] || { echo "usage: scripts/third_party.sh series DIR" >&2; exit 2; } ;;
*) echo "usage: scripts/third_party.sh [check|apply|series DIR]" >&2; exit 2 ;;
esac

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM

# pristine MODULE@VERSION DEST: the release as the module proxy serves it, copied to DEST (writable).
pristine() {
	dir=$(GOFLAGS=-mod=mod go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
	[ -n "$dir" ] && [ -d "$dir" ] || { echo "third_party: go mod download $1 gave no directory" >&2; exit 1; }
	cp -R "$dir" "$2"
	chmod -R u+w "$2"
}

# patched NAME DEST: the release of NAME with its patches applied, in DEST. git apply runs with a repository of
# its own outside DEST (GIT_DIR), so that no enclosing repository changes how it reads the paths.
patched() {
	pristine "$(modver "$1")" "$2"
	GIT_DIR=$tmp/$1.git GIT_WORK_TREE=$2 git init -q
	for p in "$root"/third_party/patches/"$1"/*.patch; do
		[ -f "$p" ] || continue
		(cd "$2" && GIT_DIR=$tmp/$1.git GIT_WORK_TREE=$2 git apply --whitespace=nowarn "$p") ||
			{ echo "third_party: $p does not apply to $(modver "$1")" >&2; exit 1; }
	done
	rm -rf "${tmp:?}/$1.git"
}

modver() { printf '%s\n' "$LIBRARIES" | sed -n "s/:$1\$//p"; }
names() { printf '%s\n' "$LIBRARIES" | sed 's/.*://'; }

status=0
for name in $(names); do
	case $cmd in
	check)
		patched "$name" "$tmp/$name"
		if ! diff -r -u "$tmp/$name" "third_party/$name" >"$tmp/$name.diff"; then
			sed "s#$tmp/##" "$tmp/$name.diff" | head -n 60 >&2
			echo "third_party/$name differs from $(modver "$name") + third_party/patches/$name (above: - release + patches, + third_party/$name)" >&2
			status=1
		fi
		mod=$(modver "$name")
		have=$(go list -m -f '{{.Version}}' "${mod%@*}")
		[ "$have" = "${mod#*@}" ] ||
			{ echo "third_party: go.mod requires ${mod%@*} $have, the patches are for ${mod#*@}" >&2; status=1; }
		;;
	apply)
		patched "$name" "$tmp/$name"
		rm -rf "third_party/$name"
		cp -R "$tmp/$name" "third_party/$name"
		echo "third_party/$name: $(modver "$name") + $(ls third_party/patches/"$name" | wc -l) patches"
		;;
	series)
		d=$2/$name
		pristine "$(modver "$name")" "$d"
		git -C "$d" init -q
		git -C "$d" add -A
		git -C "$d" -c user.name="The edgectl authors" -c user.email=edgectl@invalid commit -q -m "$name $(modver "$name" | sed 's/.*@//') as released (go mod download)"
		git -C "$d" -c user.name="The edgectl authors" -c user.email=edgectl@invalid am -q "$root"/third_party/patches/"$name"/*.patch
		echo "$d: $(git -C "$d" log --oneline | wc -l) commits (the release, then the patches)"
		;;
	esac
done

if [ "$cmd" = check ]; then
	# Every Go file carries the MPL-2.0 notice in its first lines (upstream's SPDX line or the notice's text).
	for f in $(find third_party -name '*.go'); do
		head -n 5 "$f" | grep -q -e 'Mozilla Public License' -e 'SPDX-License-Identifier: MPL-2.0' ||
			{ echo "third_party: $f has no MPL-2.0 notice" >&2; status=1; }
	done
	[ $status -eq 0 ] && echo "third_party: $(names | tr '\n' ' ')= releases + patches, every Go file under MPL-2.0"
fi
exit $status
