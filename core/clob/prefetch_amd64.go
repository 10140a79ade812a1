//go:build amd64 && !purego

package clob

import "unsafe"

// prefetch asks the CPU to bring the cache lines of the n bytes at p
// (n > 0) into its caches without waiting for them. The engine calls it
// for memory it will touch a few steps later (the next free slot, the
// orders of the next chunks, the next events): a plain load would stall
// until the line arrives.
//
//go:noescape
func prefetch(p unsafe.Pointer, n uintptr)
