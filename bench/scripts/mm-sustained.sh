#!/usr/bin/env bash
# mm-sustained.sh BASE RUNS [DURATION]
#
# The node's cost under market-maker ladders held for a while, before and
# after a change, in one run: builds ledgerd at commit BASE and from the
# working tree (ledger-bench from the working tree drives both), then, RUNS
# times, alternating base and head, starts a fresh `ledgerd --dev` on
# loopback, runs
#
#   ledger-bench --scenario mm --rate RATE --conns CONNS --duration DURATION
#
# against it and stops it. Prints per run the node's CPU time (user +
# system, from /proc) per acknowledged request, the achieved rate, the
# acknowledgement p50 and p99 and the data directory's size at the end;
# then the medians per build. Where pipeline-before-after.sh steps through
# rates for 5 s each, this holds one rate long enough for the store's
# compactions to weigh (DURATION, default 90s).
#
# Environment: RATE (1200), CONNS (32). Needs jq.
#
#   bench/scripts/mm-sustained.sh b9d3511 2
set -euo pipefail
usage="usage: mm-sustained.sh BASE RUNS [DURATION]"
base=${1:?$usage}
runs=${2:?$usage}
duration=${3:-90s}
rate=${RATE:-1200}
conns=${CONNS:-32}
# Bounds: ledger-bench ends by itself (its duration, drain and setup
# timeouts); benchTimeout is the backstop, as is nodeStopWait.
benchTimeout=900
nodeStopWait=20
[[ $runs =~ ^[1-9][0-9]?$ ]] || { echo "RUNS must be 1..99" >&2; exit 2; }
command -v jq >/dev/null || { echo "mm-sustained.sh needs jq" >&2; exit 2; }

. "$(dirname "$0")/node-lib.sh"
worktree_at "$base"
mkdir -p "$tmp/base" "$tmp/head"
(cd "$tmp/src" && CGO_ENABLED=0 go build -o "$tmp/base/" ./cmd/ledgerd)
(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/head/" ./cmd/ledgerd ./cmd/ledger-bench)
echo "base $(git -C "$root" rev-parse --short "$base"), head $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty')"
echo "per run: mm at $rate/s offered on $conns connections for $duration; $(nproc) CPUs"

rows=$tmp/rows # build run cpu_us achieved p50 p99 data_mb, tab-separated
printf '%-5s %4s %14s %10s %9s %9s %8s\n' build run cpu_us/request achieved/s p50_ms p99_ms data_MB
for i in $(seq 1 "$runs"); do
	for which in base head; do
		port=$(free_port)
		data=$tmp/data-$which-$i
		"$tmp/$which/ledgerd" --dev --datadir "$data" --addr "127.0.0.1:$port" >"$tmp/node.log" 2>&1 &
		node_pid=$!
		rm -f "$tmp/r.json"
		# The node's CPU is read around the whole call: the setup's funding
		# of the makers counts too, the same for both builds.
		before=""
		for _ in $(seq 1 600); do
			[[ -r /proc/$node_pid/stat ]] && before=$(cpu_ticks "$node_pid") && break
			sleep 0.1
		done
		timeout "$benchTimeout" "$tmp/head/ledger-bench" --quiet --json "$tmp/r.json" --url "http://127.0.0.1:$port" \
			--wait-up 60s --scenario mm --rate "$rate" --conns "$conns" --duration "$duration" \
			>"$tmp/bench.out" 2>&1 || true
		if [[ ! -s $tmp/r.json ]]; then
			echo "ledger-bench wrote no report:" >&2
			cat "$tmp/bench.out" >&2
			tail -n 20 "$tmp/node.log" >&2
			exit 1
		fi
		used=$(($(cpu_ticks "$node_pid") - before))
		mb=$(du -sm "$data" | cut -f1)
		jq -r --arg b "$which" --arg i "$i" --argjson used "$used" --argjson hz "$(getconf CLK_TCK)" --argjson mb "$mb" \
			'.nodes[0].steps[0].runs[0] as $r |
			[$b, $i, (if $r.ok > 0 then $used / $hz * 1e6 / $r.ok else "-" end), $r.achieved, $r.p50_ms, $r.p99_ms, $mb] | @tsv' \
			"$tmp/r.json" >>"$rows"
		stop_node
		rm -rf "$data"
		grep "^$which	$i	" "$rows" |
			awk -F'\t' '{printf "%-5s %4s %14.0f %10.0f %9.2f %9.1f %8s\n", $1, $2, $3, $4, $5, $6, $7}'
	done
done

echo
echo "medians over $runs run(s):"
for which in base head; do
	med() { awk -F'\t' -v b="$which" -v c="$1" '$1 == b {print $c}' "$rows" | median; }
	printf '%-5s %4s %14.0f %10.0f %9.2f %9.1f %8s\n' "$which" "$runs" "$(med 3)" "$(med 4)" "$(med 5)" "$(med 6)" "$(med 7)"
done
