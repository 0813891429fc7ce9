#!/usr/bin/env bash
# Write throughput with the event log on and off (issue 15: on must be at least 0.9x off), in interleaved pairs
# of runs so that the disk's and the host's moods fall on both alike; prints each pair, the medians and the ratio.
# With "dataplane" as the third argument: terminator writes with the data-plane events on and off (issue 47: on
# at least 0.95x off; every terminator made is a data-plane event).
#
#   bench/events-onoff.sh [pairs] [benchtime] [audit|dataplane]     (defaults: 5 3s audit)
set -euo pipefail
pairs=${1:-5}
bt=${2:-3s}
kind=${3:-audit}
case "$kind" in
audit) bench="CreateIdentity_InProcess/events=" ;;
dataplane) bench="CreateTerminator_InProcess/dpevents=" ;;
*) echo "bench/events-onoff.sh: the third argument is audit or dataplane, not \"$kind\"" >&2; exit 2 ;;
esac
case "$pairs" in '' | *[!0-9]* | 0) echo "bench/events-onoff.sh: pairs must be a whole number of at least 1" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
go test -c -o bin/integration.test ./integration/
cd integration
steal() { awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print t, $9}' /proc/stat; }
s0=$(steal)
on=() off=()
for _ in $(seq "$pairs"); do
	for ev in true false; do
		ns=$(../bin/integration.test -test.run '^$' -test.bench "$bench$ev\$" -test.benchtime "$bt" |
			awk '/^Benchmark/{print $3}')
		if [ "$ev" = true ]; then on+=("$ns"); else off+=("$ns"); fi
	done
	echo "pair: events on ${on[-1]} ns/op, off ${off[-1]} ns/op ($(awk -v a="${off[-1]}" -v b="${on[-1]}" 'BEGIN{printf "%.2fx", a/b}'))"
done
s1=$(steal)
# No comparison inside a print or printf: awk reads an unparenthesized `>` there as a redirection (an earlier
# `printf ..., dt>0 ? ...` wrote the figure to a file named `0`); the values are computed first.
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END{m = a[(NR+1)/2]; if (NR%2 == 0) m = (a[NR/2]+a[NR/2+1])/2; print m}'; }
mon=$(median "${on[@]}")
moff=$(median "${off[@]}")
read -r t0 st0 <<<"$s0"
read -r t1 st1 <<<"$s1"
echo "median ($kind): events on $mon ns/op, off $moff ns/op; throughput on/off $(awk -v a="$moff" -v b="$mon" 'BEGIN{printf "%.2fx", a/b}'); steal $(awk -v dt=$((t1 - t0)) -v ds=$((st1 - st0)) 'BEGIN{p = 0; if (dt+0 > 0) p = 100*ds/dt; printf "%.2f%%", p}')"
