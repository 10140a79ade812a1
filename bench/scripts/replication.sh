#!/usr/bin/env bash
# replication.sh [RUNS]
#
# Replication through NATS JetStream (issue 27), one leader and one
# follower on this machine, against its baselines in the same run: builds
# ledgerd and ledger-bench from the working tree (CGO_ENABLED=0), then RUNS
# times (default 3, or $RUNS), in this order:
#
#   base    a fresh leader WITHOUT --nats (no NATS server, no follower):
#           its write knee (the ramp below), then it is stopped
#   local   a fresh `ledgerd nats --port 0`, a fresh leader (`ledgerd --dev
#           --nats URL --nats.ack local`) and a fresh follower (`ledgerd
#           --dev --nats URL --follow`), all on loopback:
#     knee  the leader's write knee with the follower attached:
#           ledger-bench --url LEADER --scenario transfer --conns 64
#               --ramp 2000:14000:2000 --duration 4s
#           (the highest step achieving >= 95 % of its offered rate with a
#           p99 <= 100 ms; KNEE=N skips this ramp, only this one, and takes N)
#     50/90 transfers at 50 % and at 90 % of the knee for 15 s on the
#           leader (64 connections): the achieved rate and the
#           acknowledgement p50/p99; then waits until the follower has
#           applied the stream message the leader published last, and
#           reads the follower's svc_metrics: lag_p50_ms and lag_p99_ms
#           (delay from the leader reading a message's frames, right after
#           the fdatasync that made them durable (Ledger-Read-Us), to the
#           follower applying it, over its newest 4096 messages: it holds
#           the publication). The follower is restarted (same data
#           directory) before each window: its quantiles then hold no
#           messages of the steps before, only the window's (its newest
#           4096 when it published more: "msgs", 3 000-13 000 in 15 s,
#           depending on how many syncs one message carries), a few idle
#           ticks and the few published while it restarted (printed: they
#           lag seconds, and reach the p99 only past 1 % of the samples, or
#           drop out of a window of more than 4096). Around that window (from
#           before the load to the follower caught up) the leader's and
#           the follower's CPU ticks (user + system, /proc): CPU µs per
#           admitted transfer (ledger-bench's accepted count) on each (the
#           follower applies the same inputs, plus the funding and the
#           ticks, which are few; both include the funding) and their ratio
#     reads the follower's read knee (ledger-bench --url FOLLOWER --scenario
#           balance --conns 32 --ramp 5000:40000:5000 --duration 3s) with
#           the leader idle, and then while transfers run at the knee rate
#           on the leader (64 connections, 40 s, started first; the read
#           ramp starts at the first second of that load)
#   stream  a fresh NATS server, leader (`--nats.ack stream`: a write is
#           acknowledged once the stream holds it too) and follower: the
#           leader's write knee (the same ramp), then the window above at
#           50 % of the local mode's knee (the same rate as local's 50 %)
#
# and stops all of them. Prints per-run rows, then the medians over the
# runs, and the knee with NATS and a follower over the knee without (per
# run, and their median). The leader, the follower, NATS and the load
# tool share this machine's cores; each run starts once other users'
# processes have left them (3 s under 10 %, waiting at most 5 min), and
# each measurement says how much of the machine others took meanwhile
# ("others").
#
# Environment: RUNS (3), KNEE (skip the local mode's write ramp),
# RAMP_DURATION (4s), LOAD_DURATION (15s), READ_DURATION (3s), BG_DURATION
# (40s); OUT, a directory to keep each run's ledger-bench JSON reports and
# node logs in. Needs jq and curl.
#
#   RUNS=3 bench/scripts/replication.sh
set -euo pipefail
usage="usage: replication.sh [RUNS]"
runs=${1:-${RUNS:-3}}
knee_env=${KNEE:-}
rampDuration=${RAMP_DURATION:-4s}
loadDuration=${LOAD_DURATION:-15s}
readDuration=${READ_DURATION:-3s}
bgDuration=${BG_DURATION:-40s}
out=${OUT:-}
writeRamp=2000:14000:2000
readRamp=5000:40000:5000
readTop=${readRamp#*:}
readTop=${readTop%%:*}
writeConns=64
readConns=32
# Bounds: each ledger-bench call ends by itself (its steps, drains and
# setup timeouts); benchTimeout is the backstop, as are nodeStopWait, upWait
# (a process starting), catchUpWait (the follower applying the stream) and
# quietWait (other users' processes leaving the cores before a run).
benchTimeout=600
nodeStopWait=20
upWait=60
catchUpWait=120
quietWait=300
[[ $runs =~ ^[1-9][0-9]?$ ]] || { echo "$usage; RUNS must be 1..99" >&2; exit 2; }
[[ -z $knee_env || $knee_env =~ ^[1-9][0-9]*$ ]] || { echo "KNEE must be a positive integer" >&2; exit 2; }
for c in jq curl; do
	command -v "$c" >/dev/null || { echo "replication.sh needs $c" >&2; exit 2; }
done

. "$(dirname "$0")/node-lib.sh"
[[ -z $out ]] || mkdir -p "$out"

# node-lib stops only node_pid: these are the processes of a run, stopped
# (the load first, the NATS server last) on every exit.
nats_pid="" leader_pid="" follower_pid="" bg_pid=""
stop_pid() { # stop_pid PID: SIGTERM, nodeStopWait seconds, SIGKILL
	local pid=$1
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 $((nodeStopWait * 10))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
stop_run() {
	stop_pid "$bg_pid"
	bg_pid=""
	stop_pid "$follower_pid"
	follower_pid=""
	stop_pid "$leader_pid"
	leader_pid=""
	stop_pid "$nats_pid"
	nats_pid=""
}
trap 'stop_run; cleanup' EXIT

bin=$tmp/bin
mkdir -p "$bin"
(cd "$root" && CGO_ENABLED=0 go build -o "$bin/" ./cmd/ledgerd ./cmd/ledger-bench)
hz=$(getconf CLK_TCK)
echo "head $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo '+dirty'); $(nproc) CPUs shared by NATS, leader, follower and ledger-bench; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "per run: write knee $([[ -n $knee_env ]] && echo "KNEE=$knee_env (no ramp)" || echo "ramp $writeRamp, $rampDuration per step"), $writeConns conns; 50 % and 90 % of it for $loadDuration; follower reads ramp $readRamp, $readDuration per step, $readConns conns, leader idle and at its knee ($bgDuration)"

# rpc_metric PORT JQ: a field of the node's svc_metrics.
rpc_metric() {
	curl -s --max-time 5 -X POST -H 'Content-Type: application/json' \
		--data '{"jsonrpc":"2.0","id":1,"method":"svc_metrics","params":[]}' "http://127.0.0.1:$1" |
		jq -r ".result.$2"
}
# wait_role PORT ROLE: until the node reports that replication role.
wait_role() {
	for _ in $(seq 1 $((upWait * 10))); do
		[[ $(rpc_metric "$1" replication.role 2>/dev/null || true) == "$2" ]] && return 0
		sleep 0.1
	done
	echo "the node on port $1 did not become $2 within ${upWait}s" >&2
	return 1
}
# wait_up PORT: until the node answers svc_metrics.
wait_up() {
	for _ in $(seq 1 $((upWait * 10))); do
		[[ $(rpc_metric "$1" 'replication|type' 2>/dev/null || true) =~ ^(null|object)$ ]] && return 0
		sleep 0.1
	done
	echo "the node on port $1 did not answer within ${upWait}s" >&2
	return 1
}
# start_follower starts the mode's follower (again: on its data directory,
# appending to its log) and waits until it follows.
start_follower() {
	"$bin/ledgerd" --dev --datadir "$tmp/follower-$i-$mode" --addr "127.0.0.1:$fport" --nats "$url" --follow \
		>>"$tmp/$mode-follower.log" 2>&1 &
	follower_pid=$!
	wait_role "$fport" follower || { tail -n 20 "$tmp/$mode-follower.log" >&2; exit 1; }
}
# start_cluster ACK: a fresh NATS server, then a leader acknowledging
# after ACK (local or stream: it takes the lease), then a follower; sets
# mode (ACK), url, lport, fport, leader and follower.
start_cluster() {
	mode=$1
	"$bin/ledgerd" nats --port 0 --datadir "$tmp/nats-$i-$mode" >"$tmp/$mode-nats.log" 2>&1 &
	nats_pid=$!
	url=""
	for _ in $(seq 1 $((upWait * 10))); do
		url=$(grep -o 'nats listening on nats://[^ ]*' "$tmp/$mode-nats.log" | cut -d' ' -f4 || true)
		[[ -n $url ]] && break
		sleep 0.1
	done
	[[ -n $url ]] || { echo "ledgerd nats printed no URL:" >&2; cat "$tmp/$mode-nats.log" >&2; exit 1; }
	lport=$(free_port)
	fport=$(free_port)
	while [[ $fport == "$lport" ]]; do fport=$(free_port); done
	"$bin/ledgerd" --dev --datadir "$tmp/leader-$i-$mode" --addr "127.0.0.1:$lport" --nats "$url" --nats.ack "$mode" \
		>"$tmp/$mode-leader.log" 2>&1 &
	leader_pid=$!
	wait_role "$lport" leader || { tail -n 20 "$tmp/$mode-leader.log" >&2; exit 1; }
	start_follower
	leader=http://127.0.0.1:$lport
	follower=http://127.0.0.1:$fport
}
# caught_up SEQ: waits until the follower has applied stream message SEQ;
# prints the milliseconds that took.
caught_up() {
	local t0 fs=0
	t0=$(date +%s%N)
	for _ in $(seq 1 $((catchUpWait * 20))); do
		fs=$(rpc_metric "$fport" replication.stream_seq || true)
		[[ ${fs:-0} -ge $1 ]] && { echo $((($(date +%s%N) - t0) / 1000000)); return 0; }
		sleep 0.05
	done
	echo "run $i: the follower did not reach stream message $1 within ${catchUpWait}s (at $fs)" >&2
	return 1
}
# knee_of JSON: the highest step achieving >= 95 % of its offered rate with
# its p99 within the report's p99_max_ms (0: none).
knee_of() {
	jq -r '.p99_max_ms as $m | [.nodes[0].steps[] | select(.median.achieved >= 0.95 * .rate and .median.p99_ms <= $m) | .rate] |
		if length == 0 then 0 else max end' "$1"
}
# bench NAME ARGS...: ledger-bench, its report at $tmp/NAME.json; fails the
# script when it wrote none (a run past the knee that fails requests still
# writes one, and exits 1).
bench() {
	local name=$1
	shift
	rm -f "$tmp/$name.json"
	timeout "$benchTimeout" "$bin/ledger-bench" --quiet --json "$tmp/$name.json" --wait-up 30s "$@" \
		>"$tmp/$name.out" 2>&1 || true
	if [[ ! -s $tmp/$name.json ]]; then
		echo "ledger-bench ($name) wrote no report:" >&2
		cat "$tmp/$name.out" >&2
		return 1
	fi
	[[ -z $out ]] || cp "$tmp/$name.json" "$out/run$i-$name.json"
}
# odd_logs: the error lines of a run's logs (base-leader, local-nats,
# local-leader, local-follower, stream-...), on stderr.
odd_logs() {
	local f n
	for f in "$tmp"/*.log; do
		n=$(grep -ciE 'error|fatal|panic|warn' "$f" || true)
		if [[ $n -gt 0 ]]; then
			echo "run $i: $n error/warning line(s) in the $(basename "$f" .log) log, the first:" >&2
			grep -iE 'error|fatal|panic|warn' "$f" | head -n 3 >&2
		fi
		[[ -z $out ]] || cp "$f" "$out/run$i-$(basename "$f")"
	done
}

# Other users' processes (a build, a test) take the same cores and show in
# every figure: other (set by acct_end) is the share of the machine's CPU
# (all cores) they took since acct_begin, from /proc/stat's busy ticks less
# this script's (its running processes', and its reaped children's from
# `times`: ledger-bench, curl, jq). The kernel's work for ours (block I/O
# workers, softirqs) counts as others': a few % under load.
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat; }
# ours_ticks sets ours; it must run in the script's shell (not in $(...),
# whose `times` would be a subshell's).
ours_ticks() {
	local p
	times >"$tmp/times"
	ours=$(awk -v hz="$hz" 'NR == 2 {split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%d", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * hz}' "$tmp/times")
	for p in "$nats_pid" "$leader_pid" "$follower_pid"; do
		[[ -n $p && -r /proc/$p/stat ]] && ours=$((ours + $(cpu_ticks "$p")))
	done
	return 0
}
acct_begin() {
	a0_busy=$(busy_ticks)
	ours_ticks
	a0_ours=$ours
	a0_ns=$(date +%s%N)
}
# acct_end sets other (the percentage), in the script's shell too.
acct_end() {
	local busy ns
	busy=$(busy_ticks)
	ours_ticks
	ns=$(date +%s%N)
	other=$(awk -v b=$((busy - a0_busy)) -v o=$((ours - a0_ours)) -v ns=$((ns - a0_ns)) -v hz="$hz" -v n="$(nproc)" \
		'BEGIN {v = (b - o) / (ns / 1e9 * hz * n) * 100; printf "%.0f", v < 0 ? 0 : v}')
}
# quiet_gate waits (at most quietWait seconds) until others take under 10 %
# of the machine for 3 seconds in a row, and says how long it waited.
quiet_gate() {
	local quiet=0 t0=$SECONDS
	while ((SECONDS - t0 < quietWait)); do
		acct_begin
		sleep 1
		acct_end
		if ((other < 10)); then
			quiet=$((quiet + 1))
			((quiet >= 3)) && break
		else
			quiet=0
		fi
	done
	if ((quiet >= 3)); then
		(($(( SECONDS - t0 )) <= 4)) || echo "run $i: waited $((SECONDS - t0)) s for other processes to leave the cores"
	else
		echo "run $i: others still took >= 10 % of the machine after ${quietWait}s: measuring anyway"
	fi
}

# ramp_knee NAME URL: the write ramp on URL; sets rk (its knee, 0: no step
# held) and rp (the first step past it).
ramp_knee() {
	bench "$1" --url "$2" --scenario transfer --conns "$writeConns" --ramp "$writeRamp" --duration "$rampDuration"
	rk=$(knee_of "$tmp/$1.json")
	rp=$(jq -r '.nodes[0].knee_rate' "$tmp/$1.json")
}
# window KEY RATE: transfers at RATE on the current mode's leader for
# loadDuration, the follower restarted first; appends a row to lagRows.
window() {
	local key=$1 rate=$2 seqStop seq0 restartMsgs target caught lt0 lt1 ft0 ft1 repl
	# The follower's lag quantiles are over its newest 4096 messages,
	# about what a window publishes (200-850 a second): a restarted
	# follower has none from the steps before. Its samples then are the
	# window's (its newest 4096) and those published while it restarted
	# (restart_msgs: the highest, seconds; they move the p99 only past 1 %
	# of the samples).
	seqStop=$(rpc_metric "$fport" replication.stream_seq)
	stop_pid "$follower_pid"
	follower_pid=""
	start_follower
	seq0=$(rpc_metric "$lport" replication.stream_seq)
	restartMsgs=$((seq0 - seqStop))
	caught_up "$seq0" >/dev/null
	sleep 1
	seq0=$(rpc_metric "$lport" replication.stream_seq)
	acct_begin
	lt0=$(cpu_ticks "$leader_pid")
	ft0=$(cpu_ticks "$follower_pid")
	bench "load-$key" --url "$leader" --scenario transfer --conns "$writeConns" --rate "$rate" --duration "$loadDuration"
	target=$(rpc_metric "$lport" replication.stream_seq)
	caught=$(caught_up "$target")
	lt1=$(cpu_ticks "$leader_pid")
	ft1=$(cpu_ticks "$follower_pid")
	acct_end
	repl=$(curl -s --max-time 5 -X POST -H 'Content-Type: application/json' \
		--data '{"jsonrpc":"2.0","id":1,"method":"svc_metrics","params":[]}' "$follower" | jq -c '.result.replication')
	jq -r --arg i "$i" --arg key "$key" --argjson rate "$rate" --argjson msgs "$((target - seq0))" --argjson rmsgs "$restartMsgs" \
		--argjson caught "$caught" --argjson repl "$repl" --argjson lt "$((lt1 - lt0))" --argjson ft "$((ft1 - ft0))" \
		--argjson hz "$hz" --argjson other "$other" \
		'.nodes[0].steps[0].runs[0] as $r |
		(if $r.ok > 0 then $lt / $hz * 1e6 / $r.ok else "-" end) as $l |
		(if $r.ok > 0 then $ft / $hz * 1e6 / $r.ok else "-" end) as $f |
		[$i, $key, $rate, $r.achieved, $r.p99_ms, $msgs, $rmsgs, ($caught / 1000), $repl.lag_p50_ms, $repl.lag_p99_ms,
		 $l, $f, (if $r.ok > 0 and $lt > 0 then $ft / $lt else "-" end), $r.errors, $other, $r.p50_ms] | @tsv' \
		"$tmp/load-$key.json" >>"$lagRows"
}

kneeRows=$tmp/knee  # run base base_past base_other knee past other sknee spast sother, tab-separated
lagRows=$tmp/lag    # run key rate achieved p99 msgs restart_msgs catchup_s lag_p50 lag_p99 leader_us follower_us ratio errors other p50
readRows=$tmp/reads # run idle_knee loaded_knee bg_achieved bg_errors bg_outlasted idle_other loaded_other
: >"$kneeRows"
: >"$lagRows"
: >"$readRows"
t0=$SECONDS
for i in $(seq 1 "$runs"); do
	quiet_gate
	rm -f "$tmp"/*.log

	# 0. The baseline: a leader without NATS, its write knee.
	mode=base
	lport=$(free_port)
	"$bin/ledgerd" --dev --datadir "$tmp/leader-$i-base" --addr "127.0.0.1:$lport" >"$tmp/base-leader.log" 2>&1 &
	leader_pid=$!
	wait_up "$lport" || { tail -n 20 "$tmp/base-leader.log" >&2; exit 1; }
	acct_begin
	ramp_knee base "http://127.0.0.1:$lport"
	acct_end
	base=$rk basePast=$rp baseOther=$other
	stop_run

	# 1. Acknowledgements after the local fdatasync: the write knee with
	# the follower attached.
	start_cluster local
	acct_begin
	if [[ -n $knee_env ]]; then
		knee=$knee_env past=-
	else
		ramp_knee knee "$leader"
		knee=$rk past=$rp
		[[ $knee -gt 0 ]] || { echo "run $i: no write step held (first step past the knee: $past)" >&2; exit 1; }
	fi
	acct_end
	[[ -z $knee_env ]] || other=-
	kneeOther=$other

	# 2. Lag and CPU at 50 % and 90 % of it.
	for pct in 50 90; do
		window "local$pct" $((knee * pct / 100))
	done

	# 3. The follower's read knee, the leader idle, then at its knee.
	acct_begin
	bench readidle --url "$follower" --scenario balance --conns "$readConns" --ramp "$readRamp" --duration "$readDuration"
	idleKnee=$(knee_of "$tmp/readidle.json")
	acct_end
	idleOther=$other
	acct_begin
	rm -f "$tmp/bg.json"
	timeout "$benchTimeout" "$bin/ledger-bench" --json "$tmp/bg.json" --url "$leader" --scenario transfer \
		--conns "$writeConns" --rate "$knee" --duration "$bgDuration" >"$tmp/bg.out" 2>"$tmp/bg.err" &
	bg_pid=$!
	started=""
	for _ in $(seq 1 $((benchTimeout * 10))); do
		grep -q '1\.0s  *offered' "$tmp/bg.err" 2>/dev/null && started=1 && break
		kill -0 "$bg_pid" 2>/dev/null || break
		sleep 0.1
	done
	[[ -n $started ]] || { echo "run $i: the leader's load did not start:" >&2; cat "$tmp/bg.out" "$tmp/bg.err" >&2; exit 1; }
	bench readload --url "$follower" --scenario balance --conns "$readConns" --ramp "$readRamp" --duration "$readDuration"
	outlasted=no
	kill -0 "$bg_pid" 2>/dev/null && outlasted=yes # the leader's load still ran when the read ramp ended
	wait "$bg_pid" || true
	bg_pid=""
	[[ -s $tmp/bg.json ]] || { echo "run $i: the leader's load wrote no report:" >&2; tail -n 5 "$tmp/bg.err" >&2; exit 1; }
	[[ -z $out ]] || cp "$tmp/bg.json" "$out/run$i-bg.json"
	loadedKnee=$(knee_of "$tmp/readload.json")
	acct_end
	loadedOther=$other
	jq -r --arg i "$i" --argjson idle "$idleKnee" --argjson loaded "$loadedKnee" --arg o "$outlasted" \
		--argjson io "$idleOther" --argjson lo "$loadedOther" \
		'.nodes[0].steps[0].runs[0] as $r | [$i, $idle, $loaded, $r.achieved, $r.errors, $o, $io, $lo] | @tsv' \
		"$tmp/bg.json" >>"$readRows"
	stop_run

	# 4. Acknowledgements after the stream holds the write too: its write
	# knee, then the local mode's 50 % window at the same rate.
	start_cluster stream
	acct_begin
	ramp_knee sknee "$leader"
	acct_end
	sknee=$rk spast=$rp sother=$other
	window stream50 $((knee * 50 / 100))
	stop_run

	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$base" "$basePast" "$baseOther" "$knee" "$past" "$kneeOther" \
		"$sknee" "$spast" "$sother" >>"$kneeRows"
	odd_logs
	rm -rf "$tmp"/nats-"$i"-* "$tmp"/leader-"$i"-* "$tmp"/follower-"$i"-*

	awk -F'\t' -v i="$i" '$1 == i {printf "run %s: write knee without NATS %s/s (first step past it: %s; others %s %%); with NATS + follower, ack local %s/s (past: %s; others %s %%), ratio %s; ack stream %s/s (past: %s; others %s %%), ratio %s\n", $1, $2, $3, $4, $5, $6, $7, ($2 > 0 ? sprintf("%.2f", $5 / $2) : "-"), $8, $9, $10, ($2 > 0 ? sprintf("%.2f", $8 / $2) : "-")}' "$kneeRows"
	awk -F'\t' -v i="$i" '$1 == i {printf "  %-8s %7d/s offered %8.0f/s achieved, ack p50 %6.2f p99 %6.1f ms, %5d msgs (+%d while the follower restarted), caught up in %.2f s; lag p50 %7.2f p99 %8.2f ms; cpu/input leader %5.0f µs follower %5.0f µs ratio %.2f; errors %s; others %s %%\n", $2, $3, $4, $16, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15}' "$lagRows"
	awk -F'\t' -v i="$i" -v top="$readTop" '$1 == i {printf "  follower read knee: leader idle %s%s/s, leader at its knee %s%s/s (the leader achieved %.0f/s then, %s errors; its load outlasted the read ramp: %s); others %s %% / %s %%\n", ($2 == top ? ">=" : ""), $2, ($3 == top ? ">=" : ""), $3, $4, $5, $6, $7, $8}' "$readRows"
done

echo
echo "medians over $runs run(s), $(((SECONDS - t0) / 60)) min $(((SECONDS - t0) % 60)) s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
col() { awk -F'\t' -v c="$2" -v p="${3:-}" 'p == "" || $2 == p {print $c}' "$1" | median; }
ratios() { awk -F'\t' -v c="$1" '{print ($2 > 0 ? sprintf("%.2f", $c / $2) : "-")}' "$kneeRows"; }
echo "write knee (transfers, $writeConns conns): without NATS $(col "$kneeRows" 2)/s (others $(col "$kneeRows" 4) %);" \
	"with NATS + follower, ack local $(col "$kneeRows" 5)/s (others $(col "$kneeRows" 7) %), ratio $(ratios 5 | median) (runs: $(ratios 5 | paste -sd' '));" \
	"ack stream $(col "$kneeRows" 8)/s (others $(col "$kneeRows" 10) %), ratio $(ratios 8 | median) (runs: $(ratios 8 | paste -sd' '))"
printf '%-8s %9s %11s %8s %8s %6s %10s %9s %9s %12s %14s %6s %7s\n' window rate/s achieved/s ack_p50 ack_p99 msgs catchup_s lag_p50 lag_p99 leader_us/in follower_us/in ratio others%
for key in local50 local90 stream50; do
	printf '%-8s %9s %11.0f %8.2f %8.1f %6s %10.2f %9.2f %9.2f %12.0f %14.0f %6.2f %7s\n' "$key" \
		"$(col "$lagRows" 3 "$key")" "$(col "$lagRows" 4 "$key")" "$(col "$lagRows" 16 "$key")" "$(col "$lagRows" 5 "$key")" "$(col "$lagRows" 6 "$key")" \
		"$(col "$lagRows" 8 "$key")" "$(col "$lagRows" 9 "$key")" "$(col "$lagRows" 10 "$key")" "$(col "$lagRows" 11 "$key")" \
		"$(col "$lagRows" 12 "$key")" "$(col "$lagRows" 13 "$key")" "$(col "$lagRows" 15 "$key")"
done
atTop() { [[ $1 == "$readTop" ]] && echo ">=$1 (the ramp's top: no knee within it)" || echo "$1"; }
echo "follower read knee (balance, $readConns conns): leader idle $(atTop "$(col "$readRows" 2)")/s, leader at its knee $(atTop "$(col "$readRows" 3)")/s (the leader achieved $(printf '%.0f' "$(col "$readRows" 4)")/s meanwhile, $(col "$readRows" 5) errors); others took $(col "$readRows" 7) % / $(col "$readRows" 8) % of the machine"
