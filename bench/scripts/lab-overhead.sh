#!/usr/bin/env bash
# lab-overhead.sh BASE RUNS
#
# What the lab's delivery faults cost when no rule is in force: builds the
# test binaries of net/rpc and net/server at commit BASE and from the
# working tree, then RUNS times, alternating base and head, runs the
# hot-path benchmarks (BenchmarkServeChainID, BenchmarkServeGetBalance,
# BenchmarkTraffic, BenchmarkLoopback) and, at head only,
# BenchmarkServeChainIDLatencyRule (one rule in force); odd runs start
# with base, even ones with head. Prints each
# benchmark's ns/op and allocs/op per run, then the medians, and the
# median over the runs of each run's head/base ratio (base and head run
# back to back, so a ratio sees one stretch of the machine's noise), and
# the minimum ns/op of each build: on a shared machine the least disturbed
# run is the closest to the code's own cost.
#
# Environment: BENCHTIME (300ms), per benchmark and run.
#
#   bench/scripts/lab-overhead.sh 0a76095 15
set -euo pipefail
usage="usage: lab-overhead.sh BASE RUNS"
base=${1:?$usage}
runs=${2:?$usage}
[[ $runs =~ ^[1-9][0-9]?$ ]] || { echo "RUNS must be 1..99" >&2; exit 2; }
nodeStopWait=1
. "$(dirname "$0")/node-lib.sh"
worktree_at "$base"
for pkg in rpc server; do
	(cd "$tmp/src" && CGO_ENABLED=0 go test -c -o "$tmp/base-$pkg.test" ./net/$pkg)
	(cd "$root" && CGO_ENABLED=0 go test -c -o "$tmp/head-$pkg.test" ./net/$pkg)
done
echo "base $(git -C "$root" rev-parse --short "$base"), head $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty'); $(nproc) CPUs"
rows=$tmp/rows # build name ns allocs
bench() { # which pkg pattern
	(cd "$root/net/$2" && "$tmp/$1-$2.test" -test.run '^$' -test.bench "$3" -test.benchtime "${BENCHTIME:-300ms}") |
		awk -v b="$1" '/^Benchmark/ {for (i = 1; i <= NF; i++) {if ($(i+1) == "ns/op") ns = $i; if ($(i+1) == "allocs/op") a = $i}; sub(/-[0-9]+$/, "", $1); print b, $1, ns, a}'
}
for i in $(seq 1 "$runs"); do
	order="base head"
	((i % 2)) || order="head base" # the second of a pair ran slower on a busy machine
	for which in $order; do
		pat='^BenchmarkServe(ChainID|GetBalance)$'
		[[ $which == head ]] && pat='^BenchmarkServe(ChainID|GetBalance|ChainIDLatencyRule)$'
		{ bench "$which" rpc "$pat"; bench "$which" server '^Benchmark(Traffic|Loopback)$'; } | sed "s/^/$i /" | tee -a "$rows"
	done
done
echo "medians (ns/op, allocs/op), the median of the runs' head/base, and the minima:"
for name in $(awk '{print $3}' "$rows" | sort -u); do
	b=$(awk -v n="$name" '$2 == "base" && $3 == n {print $4}' "$rows" | median)
	h=$(awk -v n="$name" '$2 == "head" && $3 == n {print $4}' "$rows" | median)
	ha=$(awk -v n="$name" '$2 == "head" && $3 == n {print $5}' "$rows" | median)
	ratio=$(awk -v n="$name" '$3 == n {v[$1 " " $2] = $4} END {for (k in v) {split(k, p, " "); if (p[2] == "head" && v[p[1] " base"] > 0) printf "%.3f\n", v[k] / v[p[1] " base"]}}' "$rows" | median)
	bmin=$(awk -v n="$name" '$2 == "base" && $3 == n {print $4}' "$rows" | sort -g | head -n 1)
	hmin=$(awk -v n="$name" '$2 == "head" && $3 == n {print $4}' "$rows" | sort -g | head -n 1)
	printf '%-40s base %8s  head %8s  allocs %s  head/base %s  min base %s head %s\n' "$name" "$b" "$h" "$ha" "$ratio" "${bmin:--}" "$hmin"
done
