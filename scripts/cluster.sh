#!/bin/sh
# A local three-node edgectl cluster on loopback, for trying it out.
#
#   scripts/cluster.sh [start]   start it (or resume it: the data stays in ./cluster-data)
#   scripts/cluster.sh start N   start node N (1-3) again after it was stopped
#   scripts/cluster.sh stop [N]  stop the three nodes, or node N (SIGTERM: a leader hands over leadership)
#   scripts/cluster.sh status    the members, as the first running node sees them (exit 1 when one is down)
#   scripts/cluster.sh clean     stop and delete ./cluster-data
#
# Fixed ports: APIs on 127.0.0.1:1381-1383, cluster (Raft) on 127.0.0.1:6381-6383;
# override the first of each with EDGECTL_API_PORT / EDGECTL_CLUSTER_PORT.
# The admin password is generated once into cluster-data/admin-password
# (or taken from EDGECTL_ADMIN_PASSWORD on the first start).
set -eu

cd "$(dirname "$0")/.."
BIN=${EDGECTL_BIN:-bin/edgectl}
DATA=${EDGECTL_CLUSTER_DATA:-cluster-data}
API_PORT=${EDGECTL_API_PORT:-1381}
CLUSTER_PORT=${EDGECTL_CLUSTER_PORT:-6381}

api_port() { echo $((API_PORT + $1 - 1)); }
cluster_port() { echo $((CLUSTER_PORT + $1 - 1)); }

# running N: whether node N's process (from its pid file) is alive.
running() {
	[ -f "$DATA/n$1.pid" ] && kill -0 "$(cat "$DATA/n$1.pid")" 2>/dev/null
}

# poll SECONDS MESSAGE CMD...: runs CMD every tenth of a second until it
# succeeds; after SECONDS, prints MESSAGE and exits.
poll() {
	limit=$(($1 * 10))
	msg=$2
	shift 2
	i=0
	until "$@"; do
		i=$((i + 1))
		if [ "$i" -gt "$limit" ]; then
			echo "$msg" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# ready N: whether node N's admin socket answers (it opens after the API);
# exits if the node died.
ready() {
	"$BIN" cluster list --data-dir "$DATA/n$1" >/dev/null 2>&1 && return 0
	if ! running "$1"; then
		echo "node $1 exited; the end of $DATA/n$1.log:" >&2
		tail -n 20 "$DATA/n$1.log" >&2
		exit 1
	fi
	return 1
}

# wait_ready N: until node N is ready, or it died.
wait_ready() {
	poll 60 "node $1 not ready after 60s; see $DATA/n$1.log" ready "$1"
}

# stopped N: whether node N's process is gone.
stopped() {
	! running "$1"
}

# launch N [extra run flags]: start node N in the background.
launch() {
	n=$1
	shift
	nohup "$BIN" run --data-dir "$DATA/n$n" \
		--api-addr "127.0.0.1:$(api_port "$n")" --cluster-addr "127.0.0.1:$(cluster_port "$n")" \
		--admin-password "$PASSWORD" "$@" >>"$DATA/n$n.log" 2>&1 &
	echo $! >"$DATA/n$n.pid"
}

# node_arg N: N when it names a node (1-3), else a usage error.
node_arg() {
	case "$1" in
	1 | 2 | 3) echo "$1" ;;
	*)
		echo "no node $1: the nodes are 1, 2 and 3" >&2
		exit 2
		;;
	esac
}

# start_one N: start node N of an existing cluster again.
start_one() {
	n=$(node_arg "$1")
	[ -x "$BIN" ] || { echo "$BIN is missing: run 'make build'" >&2; exit 1; }
	[ -f "$DATA/n$n/node.json" ] || { echo "node $n was never started: run 'scripts/cluster.sh start' (or 'make cluster')" >&2; exit 1; }
	if running "$n"; then
		echo "node $n is already running (pid $(cat "$DATA/n$n.pid"))" >&2
		exit 1
	fi
	PASSWORD=$(cat "$DATA/admin-password")
	launch "$n"
	wait_ready "$n"
	echo "node $n is running again: API https://127.0.0.1:$(api_port "$n")"
}

# first_running: the number of a running node, or nothing.
first_running() {
	for n in 1 2 3; do
		if running "$n"; then
			echo "$n"
			return
		fi
	done
}

status() {
	n=$(first_running)
	[ -n "$n" ] || { echo "no node of the cluster in $DATA is running" >&2; exit 1; }
	"$BIN" cluster status --data-dir "$DATA/n$n"
}

start() {
	[ -x "$BIN" ] || { echo "$BIN is missing: run 'make build' (or 'make cluster')" >&2; exit 1; }
	mkdir -p "$DATA"
	chmod 700 "$DATA"
	if [ ! -f "$DATA/admin-password" ]; then
		pw=${EDGECTL_ADMIN_PASSWORD:-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')}
		(umask 077 && printf '%s\n' "$pw" >"$DATA/admin-password")
	fi
	PASSWORD=$(cat "$DATA/admin-password")
	for n in 1 2 3; do
		if running "$n"; then
			echo "node $n is already running (pid $(cat "$DATA/n$n.pid")); 'scripts/cluster.sh stop' first" >&2
			exit 1
		fi
	done
	if [ -f "$DATA/n1/node.json" ]; then
		# Resume: all three at once, since each waits for a quorum before it serves.
		for n in 1 2 3; do launch "$n"; done
		for n in 1 2 3; do wait_ready "$n"; done
	else
		launch 1
		wait_ready 1
		for n in 2 3; do
			token=$("$BIN" cluster join-token --data-dir "$DATA/n1" --ttl 10m 2>/dev/null)
			launch "$n" --join "127.0.0.1:$(api_port 1)" --join-token "$token"
			wait_ready "$n"
		done
	fi
	"$BIN" cluster list --data-dir "$DATA/n1"
	api1="https://127.0.0.1:$(api_port 1)"
	cat <<EOF

A three-node edgectl cluster is running (data and logs in $DATA/).

  APIs:       $api1, https://127.0.0.1:$(api_port 2), https://127.0.0.1:$(api_port 3)
              (Client API under /edge/client/v1, Management API under /edge/management/v1; any node takes any request)
  CA bundle:  $DATA/n1/pki/ca-bundle.pem (the same CA on every node)
  Admin:      admin / $PASSWORD   (also in $DATA/admin-password)

Log in (the session works on every node):
  $BIN login $api1 -u admin --ca $DATA/n1/pki/ca-bundle.pem

Members:        $BIN cluster status                (after the login; or scripts/cluster.sh status)
Stop one node:  scripts/cluster.sh stop 2          (and 'scripts/cluster.sh start 2' to bring it back)
Stop:           scripts/cluster.sh stop            (start again with 'make cluster': the data is kept)
Delete it all:  scripts/cluster.sh clean
EOF
}

# stop [N]: stop node N, or all three.
stop() {
	nodes="1 2 3"
	[ $# -eq 0 ] || nodes=$(node_arg "$1")
	for n in $nodes; do
		if running "$n"; then
			kill -TERM "$(cat "$DATA/n$n.pid")"
		fi
	done
	for n in $nodes; do
		poll 30 "node $n did not stop within 30s of SIGTERM" stopped "$n"
		rm -f "$DATA/n$n.pid"
	done
	if [ $# -eq 0 ]; then
		echo "stopped (the data stays in $DATA/)"
	else
		echo "node $1 stopped (start it again with 'scripts/cluster.sh start $1')"
	fi
}

case "${1:-start}" in
start)
	if [ $# -ge 2 ]; then start_one "$2"; else start; fi
	;;
stop)
	if [ $# -ge 2 ]; then stop "$2"; else stop; fi
	;;
status) status ;;
clean)
	stop
	rm -rf "$DATA"
	;;
*)
	echo "usage: scripts/cluster.sh [start [N]|stop [N]|status|clean]" >&2
	exit 2
	;;
esac
