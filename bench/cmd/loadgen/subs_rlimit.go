//go:build linux || darwin

package main

import (
	"fmt"
	"syscall"
)

// raiseFileLimit makes sure the process may open need files, raising the
// soft limit up to the hard one if needed. note says what it changed.
func raiseFileLimit(need uint64) (note string, err error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return "", fmt.Errorf("cannot read the open-file limit: %w", err)
	}
	if l.Cur >= need {
		return "", nil
	}
	if l.Max < need {
		return "", fmt.Errorf("%w: hard limit %d, soft %d, need %d; raise it (ulimit -Hn) or use fewer -subs", errFileLimit, l.Max, l.Cur, need)
	}
	old := l.Cur
	l.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return "", fmt.Errorf("%w: cannot raise the soft limit from %d to %d (hard %d): %v", errFileLimit, old, need, l.Max, err)
	}
	return fmt.Sprintf("open-file limit raised from %d to %d (hard %d)", old, need, l.Max), nil
}
