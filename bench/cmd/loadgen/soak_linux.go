//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD, the same value on every
// architecture.
const rusageThread = 1

// userHz is the unit of /proc/PID/stat's CPU times, USER_HZ, which Linux
// fixes at 100 on every architecture Go supports.
const userHz = 100

// processRSS returns the resident set size of process pid in bytes (the
// VmRSS line of /proc/PID/status) and its anonymous part (RssAnon: the
// heap and stacks, without the file pages Badger maps, which the kernel
// can drop and which grow with the files read).
func processRSS(pid int) (total, anon int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, fmt.Errorf("cannot read the node's RSS: %w", err)
	}
	if total, err = statusKB(b, "VmRSS"); err != nil {
		return 0, 0, err
	}
	anon, err = statusKB(b, "RssAnon")
	return total, anon, err
}

// statusKB reads the "name:  12345 kB" line of a /proc status file, in bytes.
func statusKB(status []byte, name string) (int64, error) {
	_, rest, ok := bytes.Cut(status, []byte("\n"+name+":"))
	if !ok {
		return 0, fmt.Errorf("no %s in /proc status", name)
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	fields := bytes.Fields(line) // "12345 kB"
	if len(fields) != 2 || string(fields[1]) != "kB" {
		return 0, fmt.Errorf("cannot parse %s line %q", name, line)
	}
	kb, err := strconv.ParseInt(string(fields[0]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cannot parse %s line %q: %w", name, line, err)
	}
	return kb << 10, nil
}

// processCPU returns the user plus system CPU time process pid used so far,
// from /proc/PID/stat.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("cannot read the node's CPU time: %w", err)
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("cannot parse /proc/%d/stat", pid)
	}
	fields := bytes.Fields(b[i+1:]) // fields[0] is field 3, state
	if len(fields) < 13 {
		return 0, fmt.Errorf("cannot parse /proc/%d/stat: %d fields", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime: fields 14 and 15
		t, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cannot parse /proc/%d/stat: %w", pid, err)
		}
		ticks += t
	}
	return time.Duration(ticks) * time.Second / userHz, nil
}

// selfCPU returns the user plus system CPU time of this process.
func selfCPU() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// threadCPU returns the user plus system CPU time of the calling OS thread;
// the caller must hold it (runtime.LockOSThread).
func threadCPU() time.Duration { return rusage(rusageThread) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// allocatedBytes returns the disk space a file takes: its blocks, so the
// unwritten part of a preallocated or sparse file does not count.
func allocatedBytes(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512 // st_blocks is in 512-byte units whatever the block size
	}
	return info.Size()
}
