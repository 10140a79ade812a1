//go:build !linux

package main

import (
	"errors"
	"io/fs"
	"time"
)

// errNoProc: the soak scenario reads the node's memory from /proc.
var errNoProc = errors.New("the soak scenario reads the node's RSS from /proc: Linux only")

func processRSS(pid int) (total, anon int64, err error) { return 0, 0, errNoProc }

func processCPU(pid int) (time.Duration, error) { return 0, errNoProc }

// selfCPU and threadCPU are not measured here: the report shows 0.
func selfCPU() time.Duration { return 0 }

func threadCPU() time.Duration { return 0 }

// allocatedBytes falls back to the apparent size.
func allocatedBytes(info fs.FileInfo) int64 { return info.Size() }
