// Package durability holds whole-process tests of what the node promises to
// keep: it runs the real ledgerd binary (bench/proc), drives transfers and
// orders from several accounts, kills it with SIGKILL at random moments, or
// lets its fault hook (LEDGERD_FAULT_KILL_BEFORE_STORE) kill it between a
// group's log write and its store write, restarts it on the same data
// directory, and checks that nothing it acknowledged was lost, that no nonce
// went backwards, that no receipt was attested twice and that the history
// listings and eth_getLogs hold what was acknowledged; and that a
// subscription resumed with a since from before a restart gets what it
// missed. It has no code of its own, only tests.
//
//	go test -v -run 'TestKillRestart|TestKillBetweenAppendAndStore' ./bench/durability   # -short skips them
package durability
