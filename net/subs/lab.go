package subs

import (
	"cmp"
	"slices"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
)

// The strategy lab's subscription faults (docs/lab.md, "Delivery faults"):
// a subscription closed on demand exactly as the hub closes one whose
// connection refused a notification (-32022), or made to miss ticks and
// closed as the hub closes one its fan-out left behind (-32020). Both go
// through closeSub, so the close notification, its resume_since and the
// counters are the hub's own; only the cause is the lab's.

// LagTicksLabMax bounds the ticks one lab lag withholds: at most what the
// replay buffer is sure to hold (half its minimum), so resume_since stays
// replayable.
const LagTicksLabMax = LagTicksMax

var (
	errLagTicks = jsonrpc.InvalidParams("ticks: want 1 to 64")
	errNotTick  = jsonrpc.InvalidParams("subscription: only a tick-driven channel can lag (not logs, the receipt channels or svc_pastPerfectTime)")
)

// lagState is a subscription the lab makes lag: it gets nothing while
// left ticks are fanned out, then is closed -32020 with missed = n.
type lagState struct {
	left, n uint64
	fromUs  int64 // the newest tick it was square on when the lag began
	hasFrom bool
}

// DropSubscription closes the live subscription id with -32022, as when
// its connection refused a notification; it reports whether there was one.
func (h *Hub) DropSubscription(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.subs[id]
	if s == nil || !s.live {
		return false
	}
	h.closeSub(s, CodeSlow, 0)
	return true
}

// DropAccount closes with -32022, oldest first, every live subscription
// naming account a (account, bidder or bidders; not a logs address) and
// returns how many.
func (h *Hub) DropAccount(a clob.Address) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var hit []*sub
	for _, s := range h.subs {
		if s.live && s.ch != ChannelLogs && slices.Contains(s.accounts, a) {
			hit = append(hit, s)
		}
	}
	slices.SortFunc(hit, func(x, y *sub) int { return cmp.Compare(x.n, y.n) })
	for _, s := range hit {
		h.closeSub(s, CodeSlow, 0)
	}
	return len(hit)
}

// Lag withholds the next ticks ticks from the live subscription id, then
// closes it with -32020, missed = ticks and resume_since the newest tick
// it had when the lag began, as the fan-out's own lag path does. It
// returns 1, or 0 when id is no live subscription.
func (h *Hub) Lag(id string, ticks uint64) (int, *jsonrpc.Error) {
	if ticks == 0 || ticks > LagTicksLabMax {
		return 0, errLagTicks
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.subs[id]
	switch {
	case s == nil || !s.live:
		return 0, nil
	case !s.ch.tickDriven():
		return 0, errNotTick
	case s.lag != nil:
		// A second lag extends the first: it still resumes where the first began.
		s.lag.n += ticks - s.lag.left
		s.lag.left = ticks
		return 1, nil
	}
	s.lag = &lagState{left: ticks, n: ticks, fromUs: h.doneUs, hasFrom: h.hasDone}
	h.lagging = append(h.lagging, s)
	return 1, nil
}

// countLag counts a fanned-out tick against every lagging subscription
// and closes those that have missed theirs.
// REQUIRES: h.mu held.
func (h *Hub) countLag() {
	keep := h.lagging[:0]
	for _, s := range h.lagging {
		if s.closed {
			continue
		}
		if s.lag.left--; s.lag.left == 0 {
			h.closeSub(s, CodeLagged, s.lag.n)
			continue
		}
		keep = append(keep, s)
	}
	clear(h.lagging[len(keep):])
	h.lagging = keep
}

// Accounts appends the accounts c's subscriptions name (account, bidder,
// bidders; not logs addresses), and returns how many subscriptions c has.
func (h *Hub) Accounts(c Conn, dst []clob.Address) ([]clob.Address, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ss := h.conns[c]
	for _, s := range ss {
		if s.ch == ChannelLogs {
			continue
		}
		for _, a := range s.accounts {
			if !slices.Contains(dst, a) {
				dst = append(dst, a)
			}
		}
	}
	return dst, len(ss)
}

// SubscriptionAccounts appends the accounts the subscription id names (as
// Accounts).
func (h *Hub) SubscriptionAccounts(id string, dst []clob.Address) []clob.Address {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.subs[id]; s != nil && s.ch != ChannelLogs {
		dst = append(dst, s.accounts...)
	}
	return dst
}
