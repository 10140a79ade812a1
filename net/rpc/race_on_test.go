//go:build race

package rpc_test

// raceEnabled: the race detector makes sync.Pool drop items on purpose, so
// allocation counts are only meaningful without it; and it slows every
// request several times over, which the timing bounds allow for.
const raceEnabled = true
