#!/usr/bin/env bash
# Three-node write throughput, edgectl beside etcd, in one run on this machine (issue 16; docs/performance.md).
#
#   bench/sidebyside.sh [clients] [seconds] [runs]      (defaults: 64 10 1)
#
# Each run, on loopback, with the same load tool (bench/httpload) and the same client count spread evenly
# over the members, one load process per member:
#   1. edgectl, three nodes: HTTPS keep-alive identity creates, an admin token per node;
#   2. etcd 3.4, three members (Debian's etcd-server, installed when missing): JSON-gateway puts of a
#      ~250-byte value;
#   3. edgectl, one node alone, all clients on it.
# It prints per member ok/s, p50 and p99, the sums, the edgectl/etcd ratio, each follower's rate against the
# leader's, the servers' CPU per write in the three-member phases (from /proc/PID/stat: less noisy than the rates
# on a shared machine), the load tool's own CPU per request (with /usr/bin/time), and the CPU stolen by the host
# during each phase (from /proc/stat).
#
# ETCD_TLS=1 runs etcd as edgectl runs: HTTPS for its clients (the load tool does not verify either side's
# certificate) and mutual TLS between its members. The default is plain HTTP, the setup issue 16 measures against.
#
# PROFILE=DIR also takes a 10 s CPU profile, and block, mutex and allocation profiles, of every edgectl node in the middle of
# the three-node phase (go tool pprof bin/edgectl DIR/n1.cpu.pprof).
#
# EDGECTL_ONLY=1 runs the edgectl three-node phase alone: to compare two builds by their CPU per write, run it with
# EDGECTL_BIN set to each in turn, in the same minutes (docs/performance-history.md, issue 45 part 3).
set -euo pipefail

clients=${1:-64}
secs=${2:-10}
runs=${3:-1}
case "$clients$secs$runs" in *[!0-9]*) echo "usage: bench/sidebyside.sh [clients] [seconds] [runs] (whole numbers)" >&2; exit 2 ;; esac
[ "$clients" -ge 3 ] && [ "$secs" -ge 1 ] && [ "$runs" -ge 1 ] || { echo "bench/sidebyside.sh: clients must be at least 3 (one load process per member), seconds and runs at least 1" >&2; exit 2; }
cd "$(dirname "$0")/.."
root=$(pwd)
LOAD=$root/bin/httpload
# The binary of this tree unless EDGECTL_BIN names another (an older build left in bin/ would be measured instead).
if [ -n "${EDGECTL_BIN:-}" ]; then
	BIN=$EDGECTL_BIN
	[ -x "$BIN" ] || { echo "bench/sidebyside.sh: EDGECTL_BIN=$BIN is not an executable" >&2; exit 2; }
else
	make -s build >/dev/null
	BIN=$root/bin/edgectl
fi
go build -o "$LOAD" ./bench/httpload
if ! command -v etcd >/dev/null; then
	echo "installing Debian's etcd-server and etcd-client" >&2
	if [ "$(id -u)" = 0 ]; then apt-get install -y etcd-server etcd-client >/dev/null; else sudo apt-get install -y etcd-server etcd-client >/dev/null; fi
fi

work=$(mktemp -d /tmp/sidebyside.XXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# stop_all stops the servers of the phase that ended.
stop_all() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait "${pids[@]}" 2>/dev/null || true
	pids=()
}

# freeports N: N distinct ports the kernel says are free now (bound all at
# once: ports asked for one by one can repeat, and etcd then refuses its
# cluster for a duplicate url).
freeports() {
	python3 -c 'import socket,sys
s=[socket.socket() for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1",0))
print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"
}

# cpu_sample: total and steal jiffies of all CPUs.
cpu_sample() { awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print t, $9}' /proc/stat; }
steal_pct() { # before after
	read -r t0 s0 <<<"$1"
	read -r t1 s1 <<<"$2"
	awk -v dt=$((t1 - t0)) -v ds=$((s1 - s0)) 'BEGIN{ if (dt>0) printf "%.2f", 100*ds/dt; else print "0.00" }'
}

# proc_cpu PID...: user+system CPU of the processes, in clock ticks.
proc_cpu() { local p; for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0; done | awk '{t+=$1} END{print t+0}'; }
# cpu_per_write TICKS_BEFORE TICKS_AFTER RATE: the servers' CPU per acknowledged write, in µs.
cpu_per_write() {
	awk -v d=$(($2 - $1)) -v hz="$(getconf CLK_TCK)" -v r="$3" -v s="$secs" 'BEGIN{ if (r>0) printf "%.0f", 1e6*d/hz/(r*s); else print 0 }'
}

password=bench-password-1

# etcd_certs DIR: a CA and one certificate for 127.0.0.1 (server and client use) for ETCD_TLS.
etcd_certs() {
	mkdir -p "$1"
	(
		cd "$1"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 1 \
			-subj /CN=sidebyside-ca 2>/dev/null
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr \
			-subj /CN=127.0.0.1 2>/dev/null
		printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >ext.cnf
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 1 \
			-extfile ext.cnf 2>/dev/null
	)
}

# start_edgectl N DIR: N nodes (the first bootstraps, the others join); sets api[], metrics[].
start_edgectl() {
	local n=$1 dir=$2 i token
	api=() metrics=()
	mkdir -p "$dir"
	local ports
	read -ra ports <<<"$(freeports $((3 * n)))"
	for i in $(seq 1 "$n"); do
		api[i]=${ports[3 * i - 3]}
		metrics[i]=${ports[3 * i - 2]}
		local args=(run --data-dir "$dir/n$i" --api-addr "127.0.0.1:${api[i]}" --cluster-addr "127.0.0.1:${ports[3 * i - 1]}"
			--admin-password "$password" --metrics-addr "127.0.0.1:${metrics[i]}" --log-level warn)
		[ -n "${PROFILE:-}" ] && args+=(--enable-pprof)
		if [ "$i" -gt 1 ]; then
			token=$("$BIN" cluster join-token --data-dir "$dir/n1" --ttl 10m 2>/dev/null)
			args+=(--join "127.0.0.1:${api[1]}" --join-token "$token")
		fi
		"$BIN" "${args[@]}" >"$dir/n$i.log" 2>&1 &
		pids+=($!)
		local t=0
		until curl -sf "http://127.0.0.1:${metrics[i]}/readyz" >/dev/null 2>&1; do
			t=$((t + 1))
			[ "$t" -lt 300 ] || { echo "edgectl node $i not ready; the end of its log:" >&2; tail "$dir/n$i.log" >&2; exit 1; }
			sleep 0.1
		done
	done
}

token_of() { # API port
	curl -sk -H 'Content-Type: application/json' -d "{\"username\":\"admin\",\"password\":\"$password\"}" \
		"https://127.0.0.1:$1/edge/management/v1/authenticate?method=password" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["token"])'
}

# load NAME URL CLIENTS [httpload args...]: one load process in the background, its line into $work/NAME.out.
load() {
	local name=$1 url=$2 c=$3
	shift 3
	local timed=()
	[ -x /usr/bin/time ] && timed=(/usr/bin/time -f "%U %S" -o "$work/$name.time")
	"${timed[@]}" "$LOAD" -urls "$url" -c "$c" -d "${secs}s" -prefix "$name-$RANDOM$RANDOM" "$@" >"$work/$name.out" 2>"$work/$name.err" &
	lpids+=($!)
}
# load_cpu NAME...: the load processes' own CPU per request they made, in µs (empty without /usr/bin/time): the
# same tool drives both servers, over HTTPS for edgectl and plain HTTP for etcd, so this says whether the ratio
# is the servers' (issue 45: 89 µs against edgectl, 92 against etcd).
load_cpu() {
	local m s=0 n=0
	for m in "$@"; do
		[ -s "$work/$m.time" ] || return 0
		s=$(awk -v a="$s" '{print a + $1 + $2}' "$work/$m.time")
		n=$((n + $(field "$m" ok) + $(field "$m" bad)))
	done
	[ "$n" -gt 0 ] && awk -v s="$s" -v n="$n" 'BEGIN{printf "  the load tool'"'"'s own CPU per request: %.0f µs\n", 1e6*s/n}'
	return 0
}
field() { sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$work/$1.out"; }

# report PHASE NAME...: per member lines, then the sum, the worst p99, and the steal.
report() {
	local phase=$1 steal=$2
	shift 2
	local sum=0 worst=0 r p99
	for m in "$@"; do
		r=$(field "$m" ok_per_s)
		p99=$(field "$m" p99_ms)
		printf '  %-20s %7s ok/s  p50 %7s ms  p99 %7s ms   (%s)\n' "$m" "$r" "$(field "$m" p50_ms)" "$p99" "$(tr '\n' ' ' <"$work/$m.err")"
		sum=$(awk -v a="$sum" -v b="$r" 'BEGIN{print a+b}')
		worst=$(awk -v a="$worst" -v b="$p99" 'BEGIN{m = a; if (b+0 > a+0) m = b; print m}')
	done
	printf '  %-20s %7s ok/s  worst p99 %s ms  steal %s%%\n' "$phase total" "$sum" "$worst" "$steal"
	eval "${phase//-/_}_rate=$sum ${phase//-/_}_p99=$worst ${phase//-/_}_steal=$steal"
}

# shares NAME...: each follower's rate against the leader's (members are named ...-leader and ...-follower).
shares() {
	local lrate=0 m
	for m in "$@"; do [[ $m == *-leader ]] && lrate=$(field "$m" ok_per_s); done
	for m in "$@"; do
		[[ $m == *-follower ]] && printf '  %-20s %s of the leader'"'"'s rate\n' "$m" "$(awk -v a="$(field "$m" ok_per_s)" -v b="$lrate" 'BEGIN{r = 0; if (b+0 > 0) r = a/b; printf "%.2fx", r}')"
	done
	return 0
}

per=$((clients / 3))
echo "side by side: $clients clients ($per per member), ${secs}s per phase, $runs run(s); $(nproc) CPUs"
for run in $(seq 1 "$runs"); do
	echo "run $run"

	# 1. edgectl, three nodes.
	start_edgectl 3 "$work/e3-$run"
	tokens=()
	for i in 1 2 3; do tokens[i]=$(token_of "${api[i]}"); done
	leader=
	for i in 1 2 3; do
		curl -sf "http://127.0.0.1:${metrics[i]}/readyz?leader=true" >/dev/null 2>&1 && leader=127.0.0.1:${api[i]}
	done
	lpids=()
	before=$(cpu_sample)
	ticks0=$(proc_cpu "${pids[@]}")
	names=()
	for i in 1 2 3; do
		role=follower
		[ "127.0.0.1:${api[i]}" = "$leader" ] && role=leader
		names+=("edgectl-n$i-$role")
		load "edgectl-n$i-$role" "https://127.0.0.1:${api[i]}/edge/management/v1/identities" "$per" \
			-H "zt-session: ${tokens[i]}" -body '{"name":"perf-{n}","type":"Device","isAdmin":false}'
	done
	if [ -n "${PROFILE:-}" ]; then
		mkdir -p "$PROFILE"
		sleep $((secs > 12 ? (secs - 10) / 2 : 1))
		for i in 1 2 3; do
			curl -s "http://127.0.0.1:${metrics[i]}/debug/pprof/profile?seconds=$((secs > 12 ? 10 : secs - 2))" >"$PROFILE/n$i.cpu.pprof" &
		done
		wait %curl 2>/dev/null || true
	fi
	wait "${lpids[@]}"
	after=$(cpu_sample)
	ticks1=$(proc_cpu "${pids[@]}")
	if [ -n "${PROFILE:-}" ]; then
		for i in 1 2 3; do
			curl -s "http://127.0.0.1:${metrics[i]}/debug/pprof/block" >"$PROFILE/n$i.block.pprof"
			curl -s "http://127.0.0.1:${metrics[i]}/debug/pprof/mutex" >"$PROFILE/n$i.mutex.pprof"
			curl -s "http://127.0.0.1:${metrics[i]}/debug/pprof/allocs" >"$PROFILE/n$i.allocs.pprof"
		done
	fi
	echo " edgectl, three nodes (leader $leader):"
	report edgectl3 "$(steal_pct "$before" "$after")" "${names[@]}"
	edgectl3_cpu=$(cpu_per_write "$ticks0" "$ticks1" "$edgectl3_rate")
	echo "  CPU of the three nodes per write: ${edgectl3_cpu} µs"
	load_cpu "${names[@]}"
	shares "${names[@]}"
	for i in 1 2 3; do
		m=$(curl -sf "http://127.0.0.1:${metrics[i]}/metrics" || true)
		if [ "127.0.0.1:${api[i]}" = "$leader" ]; then
			# Who sent the leader's answers at commit: raft's apply goroutine, or the request's handler.
			sb=$(sed -n 's/^edgectl_raft_commit_answers_total{sent_by="\([a-z]*\)"} \([0-9.e+]*\)$/\1 \2/p' <<<"$m" | sort | tr '\n' ' ')
			echo "  edgectl-n$i-leader    answers at commit sent by: ${sb:-none}"
			continue
		fi
		# How each follower came to have applied the writes it forwarded (docs/api.md, the metrics).
		# and when the leader answered them (at commit, or after its own apply).
		fw=$(sed -n 's/^edgectl_raft_forwarded_writes_total{how="\([a-z]*\)"} \([0-9.e+]*\)$/\1 \2/p' <<<"$m" | sort | tr '\n' ' ')
		fa=$(sed -n 's/^edgectl_raft_forwarded_answers_total{when="\([a-z]*\)"} \([0-9.e+]*\)$/\1 \2/p' <<<"$m" | sort | tr '\n' ' ')
		echo "  edgectl-n$i-follower  forwarded writes by how they were applied here: ${fw:-none}; answered at: ${fa:-none}"
	done
	stop_all
	if [ -n "${EDGECTL_ONLY:-}" ]; then rm -rf "$work/e3-$run"; continue; fi

	# 2. etcd, three members.
	ew=$work/etcd-$run
	mkdir -p "$ew"
	peer=() client=()
	read -ra ports <<<"$(freeports 6)"
	for i in 1 2 3; do peer[i]=${ports[2 * i - 2]} client[i]=${ports[2 * i - 1]}; done
	scheme=http tlsargs=() ctlargs=()
	if [ -n "${ETCD_TLS:-}" ]; then
		# As edgectl runs: HTTPS for clients, mutual TLS between members.
		scheme=https
		etcd_certs "$ew/tls"
		tlsargs=(--cert-file "$ew/tls/server.pem" --key-file "$ew/tls/server.key"
			--peer-cert-file "$ew/tls/server.pem" --peer-key-file "$ew/tls/server.key"
			--peer-trusted-ca-file "$ew/tls/ca.pem" --peer-client-cert-auth)
		ctlargs=(--cacert "$ew/tls/ca.pem")
	fi
	cluster="e1=$scheme://127.0.0.1:${peer[1]},e2=$scheme://127.0.0.1:${peer[2]},e3=$scheme://127.0.0.1:${peer[3]}"
	for i in 1 2 3; do
		etcd --name "e$i" --data-dir "$ew/e$i" --listen-peer-urls "$scheme://127.0.0.1:${peer[i]}" \
			--initial-advertise-peer-urls "$scheme://127.0.0.1:${peer[i]}" --listen-client-urls "$scheme://127.0.0.1:${client[i]}" \
			--advertise-client-urls "$scheme://127.0.0.1:${client[i]}" --initial-cluster "$cluster" \
			--initial-cluster-state new --log-level error "${tlsargs[@]}" >"$ew/e$i.log" 2>&1 &
		pids+=($!)
	done
	t=0
	until etcdctl "${ctlargs[@]}" --dial-timeout 1s --command-timeout 2s --endpoints "$scheme://127.0.0.1:${client[1]}" endpoint health >/dev/null 2>&1; do
		t=$((t + 1))
		[ "$t" -lt 100 ] && kill -0 "${pids[@]}" 2>/dev/null || { echo "etcd not healthy; its logs: $ew/e*.log" >&2; tail -n 3 "$ew"/e*.log >&2; exit 1; }
		sleep 0.2
	done
	lpids=()
	names=()
	before=$(cpu_sample)
	ticks0=$(proc_cpu "${pids[@]}")
	for i in 1 2 3; do
		# etcd's followers forward proposals to the leader too: its leader's and followers' shares are the yardstick.
		role=follower
		st=$(ETCDCTL_API=3 etcdctl "${ctlargs[@]}" --endpoints "$scheme://127.0.0.1:${client[i]}" -w fields endpoint status 2>/dev/null)
		[ -n "$st" ] && [ "$(sed -n 's/^"MemberID" : //p' <<<"$st")" = "$(sed -n 's/^"Leader" : //p' <<<"$st")" ] && role=leader
		names+=("etcd-e$i-$role")
		load "etcd-e$i-$role" "$scheme://127.0.0.1:${client[i]}/v3/kv/put" "$per" \
			-body '{"key":"{b64n}","value":"dmFsdWUtMjU2LWJ5dGVzLXBheWxvYWQtcGFkZGluZy1wYWRkaW5nLXBhZGRpbmctcGFkZGluZy1wYWRkaW5nLXBhZGRpbmc="}'
	done
	wait "${lpids[@]}"
	after=$(cpu_sample)
	ticks1=$(proc_cpu "${pids[@]}")
	echo " etcd, three members${ETCD_TLS:+ (TLS for clients and between members)}:"
	report etcd3 "$(steal_pct "$before" "$after")" "${names[@]}"
	etcd3_cpu=$(cpu_per_write "$ticks0" "$ticks1" "$etcd3_rate")
	echo "  CPU of the three members per write: ${etcd3_cpu} µs"
	load_cpu "${names[@]}"
	shares "${names[@]}"
	stop_all

	# 3. edgectl, one node.
	start_edgectl 1 "$work/e1-$run"
	lpids=()
	before=$(cpu_sample)
	load edgectl-single "https://127.0.0.1:${api[1]}/edge/management/v1/identities" "$clients" \
		-H "zt-session: $(token_of "${api[1]}")" -body '{"name":"perf-{n}","type":"Device","isAdmin":false}'
	wait "${lpids[@]}"
	after=$(cpu_sample)
	echo " edgectl, one node:"
	report edgectl1 "$(steal_pct "$before" "$after")" edgectl-single
	stop_all
	rm -rf "$work"/e3-"$run" "$work"/etcd-"$run" "$work"/e1-"$run"

	ratio=$(awk -v a="$edgectl3_rate" -v b="$etcd3_rate" 'BEGIN{r = 0; if (b+0 > 0) r = a/b; printf "%.2f", r}')
	p99ratio=$(awk -v a="$edgectl3_p99" -v b="$etcd3_p99" 'BEGIN{r = 0; if (b+0 > 0) r = a/b; printf "%.2f", r}')
	echo " ratio edgectl/etcd (three members): $ratio; worst p99 $edgectl3_p99 ms vs $etcd3_p99 ms (${p99ratio}x); servers' CPU per write $edgectl3_cpu vs $etcd3_cpu µs"
	echo "| $run | $edgectl3_rate | $edgectl3_p99 | $etcd3_rate | $etcd3_p99 | **$ratio** | $edgectl1_rate | $edgectl3_steal / $etcd3_steal / $edgectl1_steal |"
done
