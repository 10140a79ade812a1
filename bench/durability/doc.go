// Package durability holds whole-process tests of what the node promises to
// keep: it runs the real ledgerd binary (bench/proc), drives transfers and
// orders from several accounts, kills it with SIGKILL at random moments and
// restarts it on the same data directory, and checks that nothing it
// acknowledged was lost, that no nonce went backwards and that no receipt
// was attested twice; and that a subscription resumed with a since from
// before a restart gets what it missed. It has no code of its own, only
// tests.
//
//	go test -v -run TestKillRestart ./bench/durability   # -short skips it
package durability
