package main

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/ledgervenue/node/net/node"
)

// faultKillBeforeStore names the fault injection the durability tests use
// (bench/durability): LEDGERD_FAULT_KILL_BEFORE_STORE=N makes the process
// kill itself with SIGKILL just before the store write of the Nth group
// that holds inputs, when those inputs are durable and acknowledged and
// nothing derived from them is stored yet (groups of batches, claims or a
// snapshot alone are not counted: a kill there would lose nothing to
// rebuild). Unset, nothing changes.
const faultKillBeforeStore = "LEDGERD_FAULT_KILL_BEFORE_STORE"

func faultHooks(cfg *node.Config) error {
	v, ok := os.LookupEnv(faultKillBeforeStore)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return fmt.Errorf("%s must be a count ≥ 1, got %q", faultKillBeforeStore, v)
	}
	var stores atomic.Int64
	cfg.BeforeStore = func(inputs int) error {
		if inputs > 0 && stores.Add(1) == n {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way: write nothing more
		}
		return nil
	}
	return nil
}
