#!/usr/bin/env bash
# before-after.sh BASE RUNS [loadgen flags...]
#
# Measures the write path before and after a change in one run: builds
# bench/cmd/loadgen (it embeds the node) at commit BASE and from the working
# tree, then runs the two alternately RUNS times each with the same flags, so
# both see the same machine and the same noise. Prints each run's summary
# lines tagged "base" or "head"; BENCHMARKS.md takes medians of them.
#
#   bench/scripts/before-after.sh 2b311e8 5 -scenario transfer -duration 5s -conns 64
set -euo pipefail
base=${1:?usage: before-after.sh BASE RUNS [loadgen flags...]}
runs=${2:?usage: before-after.sh BASE RUNS [loadgen flags...]}
shift 2
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add --detach "$tmp/src" "$base" >/dev/null
(cd "$tmp/src" && CGO_ENABLED=0 go build -o "$tmp/loadgen-base" ./bench/cmd/loadgen)
(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/loadgen-head" ./bench/cmd/loadgen)
echo "base $(git -C "$root" rev-parse --short "$base"), head $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty'); flags: $*"
for i in $(seq 1 "$runs"); do
	for which in base head; do
		"$tmp/loadgen-$which" -runs 1 "$@" 2>&1 | grep -E '^  (run 1|    submit|    [0-9]+ transfers per)' | sed "s/^/$which $i /"
	done
done
