#!/usr/bin/env bash
# lab-latency.sh RUNS [N] [MS]
#
# The accuracy of the lab's injected latency (docs/lab.md, "Delivery
# faults"): builds ledgerd and bench/cmd/labdelay from the working tree,
# then RUNS times starts a fresh `ledgerd --dev` on loopback and runs
# labdelay against it: per transport N undelayed eth_chainId calls, then N
# under a fixed MS ms rule for every answer (defaults 200, 50). Prints per
# run and transport the undelayed p50/p99 and the error (latency - MS)
# p50/p99 in µs, and how late a plain Go timer of MS ms fired in the
# client meanwhile (the machine's own timer noise), then their medians
# over the runs.
#
#   bench/scripts/lab-latency.sh 5
set -euo pipefail
usage="usage: lab-latency.sh RUNS [N] [MS]"
runs=${1:?$usage}
n=${2:-200}
ms=${3:-50}
nodeStopWait=20
[[ $runs =~ ^[1-9][0-9]?$ ]] || { echo "RUNS must be 1..99" >&2; exit 2; }

. "$(dirname "$0")/node-lib.sh"
(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/" ./cmd/ledgerd ./bench/cmd/labdelay)
echo "head $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty'); $n calls per series, $ms ms injected; $(nproc) CPUs"
rows=$tmp/rows
for i in $(seq 1 "$runs"); do
	port=$(free_port)
	"$tmp/ledgerd" --dev --datadir "$tmp/data-$i" --addr "127.0.0.1:$port" >"$tmp/node.log" 2>&1 &
	node_pid=$!
	for _ in $(seq 1 600); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.1
	done
	"$tmp/labdelay" -url "http://127.0.0.1:$port" -n "$n" -ms "$ms" | sed "s/^/$i /" | tee -a "$rows"
	stop_node
	rm -rf "$tmp/data-$i"
done
for tr in http ws timer; do
	line="median $tr"
	for k in base_p50_us base_p99_us err_p50_us err_p99_us late_p50_us late_p99_us; do
		grep " $tr " "$rows" | grep -q " $k=" || continue
		line+=" $k=$(grep " $tr " "$rows" | tr ' ' '\n' | grep "^$k=" | cut -d= -f2 | median)"
	done
	echo "$line"
done
