//go:build race

package attest

// raceEnabled: under the race detector sync.Pool drops items on purpose, so
// pooled paths allocate and their zero-alloc assertions do not hold.
const raceEnabled = true
