// Package bench holds the end-to-end benchmarks of the node; it has no code
// of its own. Microbenchmarks live next to the code they measure
// (*_timing_test.go); what lives here measures whole servers over loopback.
//
//	bench/load          raw-TCP HTTP/1.1 load client: C keep-alive connections,
//	                    P pipelined requests each, bounded by count and time,
//	                    latency percentiles from a log-linear histogram
//	bench/baseline      the yardstick: a plain net/http + encoding/json server
//	                    answering eth_chainId and eth_getBalance byte-for-byte
//	                    like the node
//	bench/cmd/loadgen   starts the node and the baseline in one process and
//	                    drives both with the same client, alternating runs;
//	                    its soak scenario drives the real binary for minutes
//	                    and samples its RSS, disk and restart time
//	bench/cmd/histbench builds histories of N inputs and measures a restart
//	                    of the real binary over them, and old-record reads
//	bench/durability    kills and restarts the real binary under load
//	bench/bridge        the bridge contract (Solidity) and its tests against
//	                    anvil: claims, deposits over --l1, make e2e-bridge
//
// Running:
//
//	go run ./bench/cmd/loadgen -scenario all -runs 5 -duration 5s -conns 16 -pipeline 1
//	make stress         # the transfer scenario for 10 s
//	go run ./bench/cmd/loadgen -scenario soak -duration 10m
//	go run ./bench/cmd/histbench -sizes 100000,1000000
//
// Results and how they were taken: BENCHMARKS.md.
//
// Reading the figures. Client and servers share the machine's cores, so a
// server's throughput is measured together with the client's cost; the
// client is kept cheap (no net/http, one goroutine per connection, no
// allocation per request) so that it takes the same share from both servers.
// Ratios between runs taken in the same process, alternating, are more
// trustworthy than absolute rates, which move with whatever else the machine
// runs. Transfers are bounded by durability (one fsync per group commit) and
// by sender recovery on the event loops; loadgen prints the recovery bound
// GOMAXPROCS / t_recovery next to the achieved rate.
package bench
