# node-lib.sh: what the before/after scripts that start ledgerd processes
# share. Source it (bash) after setting nodeStopWait (seconds a stopped
# node is given before SIGKILL); it makes tmp (a fresh folder) and root
# (the repository's top), and on exit stops the node (node_pid), removes
# the worktree at $tmp/src and $tmp.

root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
node_pid=""

# stop_node stops the node started last (node_pid), if any.
stop_node() {
	[[ -n $node_pid ]] || return 0
	kill -TERM "$node_pid" 2>/dev/null || true
	for _ in $(seq 1 $((nodeStopWait * 10))); do
		kill -0 "$node_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$node_pid" 2>/dev/null || true
	wait "$node_pid" 2>/dev/null || true
	node_pid=""
}
cleanup() {
	stop_node
	git -C "$root" worktree remove --force "$tmp/src" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# worktree_at checks out commit $1 at $tmp/src.
worktree_at() {
	git -C "$root" worktree add --detach "$tmp/src" "$1" >/dev/null
}

# free_port prints a loopback TCP port nobody listens on now, below the
# kernel's ephemeral range: the load's thousands of client connections take
# ports from that range, and one still in TIME_WAIT makes the node's bind
# fail ("address already in use").
free_port() {
	local p lo
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
	for _ in $(seq 1 100); do
		p=$((10000 + RANDOM % (lo - 10000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	echo "no free port found" >&2
	return 1
}

# cpu_ticks prints the user + system clock ticks process $1 has used.
cpu_ticks() {
	awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat"
}

# median of the numbers on stdin, the upper one of an even count ("-" for
# none; "-" entries are skipped), as ledger-bench takes them.
median() {
	{ grep -v '^-$' || true; } | sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else print v[int(NR / 2) + 1]}'
}
