package rpc

import (
	"testing"
	"time"
)

// TestSyncTimeoutClamped: svc_sendRawTransaction waits at most
// SyncSendTimeoutMax, whatever timeout_secs asks (no overflow either).
func TestSyncTimeoutClamped(t *testing.T) {
	for _, c := range []struct {
		secs uint64
		want time.Duration
	}{{0, 0}, {3, 3 * time.Second}, {60, SyncSendTimeoutMax}, {61, SyncSendTimeoutMax}, {1 << 63, SyncSendTimeoutMax}} {
		if got := syncTimeout(c.secs); got != c.want {
			t.Fatalf("%d s: %v, want %v", c.secs, got, c.want)
		}
	}
}
