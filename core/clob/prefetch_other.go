//go:build !amd64 || purego

package clob

import "unsafe"

// prefetch is a no-op where the engine has no assembly for it.
func prefetch(p unsafe.Pointer, n uintptr) {}
