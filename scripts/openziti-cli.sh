#!/bin/sh
# Drives OpenZiti's own `ziti` admin CLI against a fresh one-node edgectl, as
# an OpenZiti user would: login with -y (fetches /.well-known/est/cacerts),
# create and enroll identities (ott, updb), configs of the built-in tunneler
# types, services, policies, an edge router, a posture check, list every kind,
# update, delete. Any failing step stops it with a non-zero exit.
#
# The CLI is github.com/openziti/ziti v1.7.2, the version the module proxy
# serves, built once and cached by scripts/ziti.sh.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$(mktemp -d /tmp/edgectl-openziti.XXXXXX)}
ZITI=$(sh "$ROOT/scripts/ziti.sh")
(cd "$ROOT" && go build -o "$WORK/edgectl" ./cmd/edgectl)

PORT=${PORT:-18443}
"$WORK/edgectl" run --data-dir "$WORK/data" --api-addr 127.0.0.1:$PORT --cluster-addr 127.0.0.1:$((PORT + 1)) \
	--admin-password admin-pass-1 >"$WORK/node.log" 2>&1 &
NODE=$!
trap 'kill $NODE 2>/dev/null; wait $NODE 2>/dev/null' EXIT
for _ in $(seq 1 50); do curl -ksf "https://127.0.0.1:$PORT/version" >/dev/null && break; sleep 0.2; done

export HOME=$WORK/home
mkdir -p "$HOME"
cd "$WORK"
step() { echo "+ ziti $*"; "$ZITI" "$@"; }
step edge login 127.0.0.1:$PORT -u admin -p admin-pass-1 -y
step edge create identity laptop -o laptop.jwt
step edge enroll laptop.jwt -o laptop.json
step edge create identity updb-user --updb updb-user -o updb.jwt
step edge enroll updb.jwt -o updb.json --password Updb-pass-123
step edge create config web-intercept intercept.v1 '{"protocols":["tcp"],"addresses":["web.ziti"],"portRanges":[{"low":80,"high":80}]}'
step edge create config web-host host.v1 '{"protocol":"tcp","address":"localhost","port":8080}'
step edge create service web --configs web-intercept,web-host -a web
step edge create service-policy web-dial Dial --identity-roles '@laptop' --service-roles '#web'
step edge create edge-router er1 -o er1.jwt -t
step edge create edge-router-policy all-ers --identity-roles '#all' --edge-router-roles '#all'
step edge create service-edge-router-policy all-serp --service-roles '#all' --edge-router-roles '#all'
step edge create posture-check mac mac1 --mac-addresses aabbccddeeff
step edge update identity updb-user -a ops
for k in api-sessions auth-policies authenticators cas config-types configs edge-router-policies edge-routers \
	enrollments external-jwt-signers identities posture-check-types posture-checks service-edge-router-policies \
	service-policies services sessions terminators transit-routers; do
	step edge list "$k" 'true limit 10' >/dev/null
done
step edge policy-advisor identities laptop web || true # reports the routers offline: there is no router here
step edge delete identity laptop
step edge login 127.0.0.1:$PORT -u updb-user -p Updb-pass-123 -y
echo "the ziti CLI ran every step against edgectl"
