//go:build unix

package clob

import "syscall"

// cpuNs is the process's user + system CPU time: on a shared machine it
// moves far less than the wall clock with other processes' load.
func cpuNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
