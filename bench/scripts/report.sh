#!/usr/bin/env bash
# report.sh BASE RUNS
#
# The strategy report's costs (issue 28, part 4), in one run:
#   - its computation per report of 2 048, 10 000 and 100 000 fills
#     (marketdata BenchmarkReport, without the index's lock);
#   - what the book samples add to each tick, per book that ran: the
#     engine's SampleBook (clob BenchmarkSampleBook, a best level of 100
#     orders) and the index's sample (marketdata BenchmarkSample, a book
#     that changed, 16 owners a side), against the engine's tick of the
#     same book (clob BenchmarkTick/resting=1000, 20 000 intents a tick);
#   - the node's whole tick before and after the change: BenchmarkTickHold
#     (net/node) built at BASE and from the working tree, run alternately.
# Each benchmark runs RUNS times; the lines are tagged so that medians can
# be taken (BENCHMARKS.md).
#
#   bench/scripts/report.sh main 5
set -euo pipefail
base=${1:?usage: report.sh BASE RUNS}
runs=${2:?usage: report.sh BASE RUNS}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
git -C "$root" archive "$base" | tar -x -C "$tmp/src"
(cd "$tmp/src" && go test -c -o "$tmp/node-base.test" ./net/node/)
(cd "$root" && go test -c -o "$tmp/node-head.test" ./net/node/ &&
	go test -c -o "$tmp/marketdata.test" ./core/marketdata/ &&
	go test -c -o "$tmp/clob.test" ./core/clob/)
echo "base $(git -C "$root" rev-parse --short "$base"), head $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty')"
for i in $(seq 1 "$runs"); do
	"$tmp/marketdata.test" -test.run XXX -test.bench 'BenchmarkReport$' -test.benchtime 3x | grep '^Benchmark' | sed "s/^/report $i /"
	"$tmp/marketdata.test" -test.run XXX -test.bench 'BenchmarkSample$' -test.benchtime 200000x | grep '^Benchmark' | sed "s/^/sample $i /"
	"$tmp/clob.test" -test.run XXX -test.bench 'BenchmarkSampleBook$|BenchmarkTick$/resting=1000$' | grep '^Benchmark' | sed "s/^/engine $i /"
	for which in base head; do
		(cd "$tmp" && "$tmp/node-$which.test" -test.run XXX -test.bench 'BenchmarkTickHold$' -test.benchtime 200x) |
			grep '^Benchmark' | sed "s/^/tick-$which $i /"
	done
done
