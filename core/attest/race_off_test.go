//go:build !race

package attest

const raceEnabled = false
