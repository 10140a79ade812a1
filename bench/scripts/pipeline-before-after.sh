#!/usr/bin/env bash
# pipeline-before-after.sh BASE RUNS [DURATION]
#
# Reads under write load, before and after a change, in one run: builds
# ledgerd (and ledger-bench) at commit BASE and from the working tree, then,
# RUNS times, alternating base and head, starts a fresh `ledgerd --dev` on
# loopback with its Prometheus endpoint, measures
#
#   idle      the read probe alone:  ledger-bench --scenario idle --probe PROBE
#   mm        the probe beside maker ladders at each rate of RATES:
#             ledger-bench --scenario mm --ramp RATES --conns CONNS --probe PROBE --metrics ...
#
# and stops the node. Each run of each step lasts DURATION (default 5s).
# Only the node differs between the two columns: when BASE's ledger-bench
# has no --probe, the working tree's drives both.
#
# Prints one line per (build, run, rate): the probe's p99, the mm
# acknowledgement p99 (every mm request: 3 in 4 are ladders, 1 in 4 taker
# IOC orders), the achieved rate, the auction tick p99 from
# ledgerd_auction_tick_duration_seconds, the failed requests, and the p99
# of the part of a tick holding the sequencer's lock from
# ledgerd_auction_tick_hold_seconds ("-" for a node without it); then the
# medians per (build, rate) and each build's knee over those medians (the
# first rate achieving under 95 % of the offered one or with an ack p99 over
# P99_MAX_MS). Last, per build, the node's CPU time (user + system, from
# /proc) per acknowledged mm request over the whole ramp, probe included:
# a figure the machine's noise moves less than the tails. BENCHMARKS.md
# takes these.
#
# Environment: RATES (500,1000,1500,3000,5000), PROBE (balance:3000),
# CONNS (32), DRAIN (5s), P99_MAX_MS (100); OUT, a directory to keep each
# ledger-bench JSON report in (BUILD-RUN-idle.json, BUILD-RUN-mm.json).
# Needs jq.
#
#   bench/scripts/pipeline-before-after.sh 234691b 5
set -euo pipefail
usage="usage: pipeline-before-after.sh BASE RUNS [DURATION]"
base=${1:?$usage}
runs=${2:?$usage}
duration=${3:-5s}
rates=${RATES:-500,1000,1500,3000,5000}
probe=${PROBE:-balance:3000}
conns=${CONNS:-32}
drain=${DRAIN:-5s}
p99max=${P99_MAX_MS:-100}
# Bounds: each ledger-bench call ends by itself (its steps, drains and
# setup timeouts); benchTimeout is the backstop, as is nodeStopWait.
benchTimeout=900
nodeStopWait=20
[[ $runs =~ ^[1-9][0-9]?$ ]] || { echo "RUNS must be 1..99" >&2; exit 2; }
command -v jq >/dev/null || { echo "pipeline-before-after.sh needs jq" >&2; exit 2; }

. "$(dirname "$0")/node-lib.sh"
worktree_at "$base"
mkdir -p "$tmp/base" "$tmp/head"
(cd "$tmp/src" && CGO_ENABLED=0 go build -o "$tmp/base/" ./cmd/ledgerd ./cmd/ledger-bench)
(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/head/" ./cmd/ledgerd ./cmd/ledger-bench)
bench_note=""
if ! "$tmp/base/ledger-bench" -h 2>&1 | grep -q -- '-probe'; then
	cp "$tmp/head/ledger-bench" "$tmp/base/ledger-bench"
	bench_note=" (base's ledger-bench has no --probe: head's drives both)"
fi
echo "base $(git -C "$root" rev-parse --short "$base"), head $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty')$bench_note"
echo "per run: $duration, drain $drain; probe $probe; mm at $rates/s offered on $conns connections; $(nproc) CPUs"

# bench runs ledger-bench of build $1 with the rest as flags and its JSON
# report to $tmp/r.json (and $OUT/$2.json); a run with failed requests
# still reports.
bench() {
	local which=$1 name=$2
	shift 2
	rm -f "$tmp/r.json"
	timeout "$benchTimeout" "$tmp/$which/ledger-bench" --quiet --json "$tmp/r.json" --drain "$drain" "$@" \
		>"$tmp/bench.out" 2>"$tmp/bench.err" || true
	if [[ ! -s $tmp/r.json ]]; then
		echo "ledger-bench $* wrote no report:" >&2
		cat "$tmp/bench.out" "$tmp/bench.err" >&2
		echo "the node's log ends:" >&2
		tail -n 20 "$tmp/node.log" >&2
		return 1
	fi
	if [[ -n ${OUT:-} ]]; then
		mkdir -p "$OUT"
		cp "$tmp/r.json" "$OUT/$name.json"
	fi
}

rows=$tmp/rows # build run rate probe_p99 ack_p99 achieved tick_p99 errors hold_p99, tab-separated
cpus=$tmp/cpus # build run cpu_us_per_request, tab-separated

# show prints rows in columns, the figures rounded.
show() {
	awk -F'\t' '{
		for (c = 4; c <= 9; c++) if (c != 8 && $c != "-") $c = sprintf(c == 6 ? "%.0f" : "%.2f", $c)
		printf "%-5s %4s %6s %13s %11s %11s %12s %7s %12s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9
	}'
}

printf '%-5s %4s %6s %13s %11s %11s %12s %7s %12s\n' build run rate probe_p99_ms ack_p99_ms achieved/s tick_p99_ms errors hold_p99_ms
for i in $(seq 1 "$runs"); do
	for which in base head; do
		port=$(free_port)
		admin=$(free_port)
		while [[ $admin == "$port" ]]; do admin=$(free_port); done
		"$tmp/$which/ledgerd" --dev --datadir "$tmp/data-$which-$i" --addr "127.0.0.1:$port" \
			--admin-addr "127.0.0.1:$admin" >"$tmp/node.log" 2>&1 &
		node_pid=$!
		url="http://127.0.0.1:$port"
		bench "$which" "$which-$i-idle" --url "$url" --wait-up 60s --scenario idle --probe "$probe" --duration "$duration"
		jq -r --arg b "$which" --arg i "$i" '.nodes[0].steps[0].runs[0] as $r |
			[$b, $i, "idle", $r.probe.p99_ms, "-", "-", "-", $r.probe.errors, "-"] | @tsv' "$tmp/r.json" >>"$rows"
		before=$(cpu_ticks "$node_pid")
		bench "$which" "$which-$i-mm" --url "$url" --scenario mm --ramp "$rates" --conns "$conns" --probe "$probe" \
			--metrics "http://127.0.0.1:$admin/metrics" --duration "$duration"
		used=$(($(cpu_ticks "$node_pid") - before))
		jq -r --arg b "$which" --arg i "$i" --argjson used "$used" --argjson hz "$(getconf CLK_TCK)" \
			'[.nodes[0].steps[].runs[0].ok] | add as $ok | [$b, $i, (if $ok > 0 then $used / $hz * 1e6 / $ok else "-" end)] | @tsv' \
			"$tmp/r.json" >>"$cpus"
		jq -r --arg b "$which" --arg i "$i" '.nodes[0].steps[] | .rate as $rate | .runs[0] as $r |
			[$b, $i, $rate, $r.probe.p99_ms, $r.p99_ms, $r.achieved, ($r.tick.p99_ms // "-"), $r.errors + $r.probe.errors,
			($r.tick.hold_p99_ms // "-")] | @tsv' \
			"$tmp/r.json" >>"$rows"
		stop_node
		rm -rf "$tmp/data-$which-$i"
		grep "^$which	$i	" "$rows" | show
	done
done

# sel prints the median of column $3 of build $1's rows at rate $2.
sel() {
	awk -F'\t' -v b="$1" -v r="$2" -v c="$3" '$1 == b && $3 == r {print $c}' "$rows" | median
}

echo
echo "medians over $runs run(s):"
printf '%-5s %4s %6s %13s %11s %11s %12s %7s %12s\n' build runs rate probe_p99_ms ack_p99_ms achieved/s tick_p99_ms errors hold_p99_ms
for which in base head; do
	knee=""
	for rate in idle ${rates//,/ }; do
		probe_p99=$(sel "$which" "$rate" 4) ack_p99=$(sel "$which" "$rate" 5) achieved=$(sel "$which" "$rate" 6)
		tick_p99=$(sel "$which" "$rate" 7) errors=$(sel "$which" "$rate" 8) hold_p99=$(sel "$which" "$rate" 9)
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$which" "$runs" "$rate" "$probe_p99" "$ack_p99" "$achieved" "$tick_p99" "$errors" "$hold_p99" | show
		if [[ $rate != idle && -z $knee ]] &&
			awk -v a="$achieved" -v p="$ack_p99" -v r="$rate" -v m="$p99max" 'BEGIN {exit !(a < 0.95 * r || p > m)}'; then
			knee=$rate
		fi
	done
	echo "$which knee: ${knee:-none up to ${rates##*,}}${knee:+/s offered} (achieved < 95 % of offered or ack p99 > $p99max ms)"
done
echo
echo "node CPU per acknowledged mm request over the ramp, µs (runs; median):"
for which in base head; do
	runs_cpu=$(awk -F'\t' -v b="$which" '$1 == b {printf "%s%.0f", sep, $3; sep = " "}' "$cpus")
	printf '%-5s %s; %.0f\n' "$which" "$runs_cpu" "$(awk -F'\t' -v b="$which" '$1 == b {print $3}' "$cpus" | median)"
done
