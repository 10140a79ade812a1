package subs

import "testing"

// TestStatsCountChannelsAndEnds: the open subscriptions per channel and the
// ended ones by reason follow Subscribe, Unsubscribe, DropConn and a
// server-initiated close (a refused Send, then shutdown).
func TestStatsCountChannelsAndEnds(t *testing.T) {
	h := New(Config{})
	a, b, slow := &fakeConn{}, &fakeConn{}, &fakeConn{refuseAt: 1}
	heads := subscribe(t, h, a, "newHeads", ``)
	subscribe(t, h, a, "svc_orderbook", `{}`)
	subscribe(t, h, b, "newHeads", ``)
	subscribe(t, h, b, "svc_pastPerfectTime", `0`)
	subscribe(t, h, slow, "svc_pastPerfectTime", `0`)
	open := func() map[string]int {
		st := h.Stats()
		m := map[string]int{}
		st.EachChannel(func(ch string, n int) {
			if n != 0 {
				m[ch] = n
			}
		})
		return m
	}
	if got := open(); got["newHeads"] != 2 || got["svc_orderbook"] != 1 || got["svc_pastPerfectTime"] != 2 || len(got) != 3 {
		t.Fatalf("open per channel %v", got)
	}
	if !h.Unsubscribe(a, heads) || h.Unsubscribe(a, heads) {
		t.Fatal("unsubscribe")
	}
	h.DropConn(a)
	h.PublishPastPerfectTime(1000)
	h.Pump() // slow refuses its notification: closed with CodeSlow
	h.Close()
	if got := open(); len(got) != 0 {
		t.Fatalf("open after close: %v", got)
	}
	ended := map[string]uint64{}
	st := h.Stats()
	st.EachEnded(func(reason string, n uint64) { ended[reason] = n })
	want := map[string]uint64{"unsubscribed": 1, "connection_closed": 1, "slow": 1, "shutdown": 2, "lagged": 0, "serialize": 0, "reverted": 0}
	for r, n := range want {
		if ended[r] != n {
			t.Errorf("ended %s: %d, want %d (all: %v)", r, ended[r], n, ended)
		}
	}
	if len(ended) != len(want) {
		t.Errorf("reasons %v", ended)
	}
}

func TestEndReasonOfCloseCodes(t *testing.T) {
	for code, want := range map[int]EndReason{CodeLagged: EndLagged, CodeShutdown: EndShutdown, CodeSlow: EndSlow, CodeSerialize: EndSerialize} {
		if got := endReasonOf(code); got != want {
			t.Errorf("endReasonOf(%d) = %v, want %v", code, got, want)
		}
	}
}
