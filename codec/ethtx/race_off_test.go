//go:build !race

package ethtx

const raceEnabled = false
