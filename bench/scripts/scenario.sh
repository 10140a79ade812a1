#!/usr/bin/env bash
# scenario.sh [RUNS] [DURATION_S]
#
# How fast a scenario plays at pace 0 (docs/lab.md, "Scenarios"): node
# seconds per wall second and wall ms per step, with the default bots
# (8 bots: a maker and a taker on each dev market) and, in the same run, the
# player's clock alone ("bots": "none": one admin_advanceTime a step, the
# ticks it runs made durable) as the baseline. The two alternate RUNS times
# (3 by default) on fresh data directories under a temporary folder; the
# figures are the player's own final log line. Prints each run and the
# medians.
#
#   bench/scripts/scenario.sh 3 120
set -euo pipefail
runs=${1:-3}
duration=${2:-120}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/ledgerd" ./cmd/ledgerd)
for bots in default none; do
	printf '{"name": "bench-%s", "seed": 1, "duration_s": %s, "pace": 0, "progress_s": %s, "bots": "%s", "then": "exit"}\n' \
		"$bots" "$duration" "$duration" "$bots" >"$tmp/$bots.json"
done
echo "commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), ${duration} s of node time a run"
for i in $(seq 1 "$runs"); do
	for bots in default none; do
		rm -rf "$tmp/data"
		line=$("$tmp/ledgerd" --dev --datadir "$tmp/data" --addr 127.0.0.1:0 --scenario "$tmp/$bots.json" 2>&1 >/dev/null | grep 'played to')
		rate=$(sed -E 's/.*\(([0-9.]+) node s a wall s, ([0-9.]+) ms a step\).*/\1 \2/' <<<"$line")
		echo "$bots $i $rate"
		echo "$rate" >>"$tmp/$bots.txt"
	done
done
median() { sort -n -k"$2" "$1" | awk -v k="$2" '{v[NR]=$k} END {print v[int((NR+1)/2)]}'; }
for bots in default none; do
	echo "median $bots: $(median "$tmp/$bots.txt" 1) node s a wall s, $(median "$tmp/$bots.txt" 2) ms a step"
done
echo "ratio default/none, wall ms a step: $(awk -v a="$(median "$tmp/default.txt" 2)" -v b="$(median "$tmp/none.txt" 2)" 'BEGIN {printf "%.2f", a / b}')"
