//go:build !unix

package clob

// cpuNs is not measured off unix: cpu-ns/order reads 0 there.
func cpuNs() int64 { return 0 }
