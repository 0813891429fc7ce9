#!/bin/sh
# Prints the path of OpenZiti's `ziti` binary (v1.7.2: router, tunnelers,
# enroll, CLI and OpenZiti's own controller), building it once from the Go
# module proxy into a cache outside the repository (about 8 minutes on 2
# cores). EDGECTL_ZITI names a binary to use instead.
#
# The build repeats ziti's own go.mod replace of pfxlog (replaces do not
# carry over from a dependency) and needs the checksum database off for a
# few of its dependencies the database has no entry for.
set -eu
if [ -n "${EDGECTL_ZITI:-}" ]; then
	echo "$EDGECTL_ZITI"
	exit 0
fi
ZITI_VERSION=v1.7.2
CACHE=${EDGECTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgectl}/ziti-$ZITI_VERSION
if [ ! -x "$CACHE/ziti" ]; then
	mkdir -p "$CACHE/build"
	cat > "$CACHE/build/go.mod" <<MOD
module zitibuild

go 1.26

require github.com/openziti/ziti $ZITI_VERSION

replace github.com/michaelquigley/pfxlog => github.com/michaelquigley/pfxlog v0.6.10
MOD
	echo "building ziti $ZITI_VERSION into $CACHE (once; about 8 minutes)" >&2
	(cd "$CACHE/build" && GOSUMDB=off GOFLAGS=-mod=mod go build -o "$CACHE/ziti.tmp" github.com/openziti/ziti/ziti) >&2
	mv "$CACHE/ziti.tmp" "$CACHE/ziti"
fi
echo "$CACHE/ziti"
