// Package ratelimit emulates the rate limits of production venues for the
// strategy lab (docs/lab.md, "Rate-limit emulation"): token buckets of
// request weight per remote address and per signing account, refilled at a
// steady rate, with a reserve that keeps cancels possible once a budget is
// spent. It decides admission only: a refused call never reaches the
// ledger, and nothing here is part of the ledger's state.
//
// Invariants: each kind keeps at most KeysMax buckets (a bucket that has
// refilled to full is the same as none, so the idle full ones are evicted
// when the table is full); a bucket never holds more than its capacity nor
// less than zero; a pass costs no allocation once its bucket exists.
package ratelimit

import (
	"math"
	"net/netip"
	"sync"
	"time"
)

// KeysMax bounds the live buckets of each kind (addresses, accounts). A
// bucket is a map entry of at most BytesPerBucket, so a full table holds at
// most 8 MiB. Past it, a new key gets a bucket only once an idle
// one has refilled to full and is evicted; until then its calls are
// refused ("table full").
const KeysMax = 65536

// BytesPerBucket bounds the memory of one live bucket, map overhead
// included (TestBytesPerBucket measures about 112 bytes on amd64 with
// both tables full).
const BytesPerBucket = 128

// Kind is a kind of budget.
type Kind uint8

// The kinds of budget.
const (
	KindAddress Kind = iota
	KindAccount
	Kinds
)

// KindNames are the kinds' names on the wire and in the metrics.
var KindNames = [Kinds]string{KindAddress: "address", KindAccount: "account"}

// Limiter holds the buckets of one configuration; a new configuration
// starts from a new Limiter (full buckets). Safe for concurrent use.
type Limiter struct {
	cfg     Config
	weights map[string]uint32 // DefaultWeights with cfg's overrides
	epoch   time.Time         // the monotonic origin of the buckets' clocks
	addr    table[netip.Addr]
	acct    table[[20]byte]
}

// New returns a limiter for cfg, or nil when cfg limits nothing.
func New(cfg Config) *Limiter {
	if !cfg.On() {
		return nil
	}
	l := &Limiter{cfg: cfg, weights: make(map[string]uint32, len(DefaultWeights)+len(cfg.Weights)), epoch: time.Now(),
		addr: newTable[netip.Addr](cfg.Address, cfg.Cancel), acct: newTable[[20]byte](cfg.Account, cfg.Cancel)}
	for m, w := range DefaultWeights {
		l.weights[m] = w
	}
	for m, w := range cfg.Weights {
		l.weights[m] = w
	}
	return l
}

// Config returns the configuration in force.
func (l *Limiter) Config() Config { return l.cfg }

// Weight returns method's weight: its entry in the table, else 1.
func (l *Limiter) Weight(method []byte) uint32 {
	if w, ok := l.weights[string(method)]; ok {
		return w
	}
	return 1
}

// Refusal says which budget refused a call, and its state.
type Refusal struct {
	Kind Kind
	// TableFull: the key has no bucket and the table holds KeysMax busy
	// ones.
	TableFull bool
	Weight    uint32
	Tokens    float64 // what the budget holds now
	Bucket    Bucket  // its shape
	// RetryAfter is when the call would pass if nothing else is charged;
	// negative when it never can (its weight is beyond the capacity).
	RetryAfter time.Duration
}

// Take charges a call of weight w to the budget of ip and, when acct is
// not nil, of that account, or returns which refused it, charging neither.
// A call that both can pay is charged to both; a cancelOnly call (a
// transaction whose orderbook calls are all cancels) that a budget cannot
// pay is paid from that budget's cancel reserve instead, if it can.
func (l *Limiter) Take(ip netip.Addr, acct *[20]byte, w uint32, cancelOnly bool) (Refusal, bool) {
	if w == 0 {
		return Refusal{}, true
	}
	now := l.now()
	fw := float64(w)
	addrUse := useNone
	if l.addr.on() {
		r, use := l.addr.take(ip, now, fw, cancelOnly)
		if use == useNone {
			r.Kind, r.Weight = KindAddress, w
			return r, false
		}
		addrUse = use
	}
	if acct != nil && l.acct.on() {
		if r, use := l.acct.take(*acct, now, fw, cancelOnly); use == useNone {
			l.addr.give(ip, now, fw, addrUse)
			r.Kind, r.Weight = KindAccount, w
			return r, false
		}
	}
	return Refusal{}, true
}

// State is a budget's state now, for lab_rateLimits.
type State struct {
	Live    bool    // a bucket exists (else it is full: the same as none)
	Tokens  float64 // what the budget holds
	Reserve float64 // what the cancel reserve holds
}

// AddressState returns ip's budget now (ok false: addresses are not
// limited).
func (l *Limiter) AddressState(ip netip.Addr) (State, bool) {
	return l.addr.state(ip, l.now()), l.addr.on()
}

// AccountState returns an account's budget now (ok false: accounts are not
// limited).
func (l *Limiter) AccountState(a [20]byte) (State, bool) {
	return l.acct.state(a, l.now()), l.acct.on()
}

// Buckets returns the live buckets of each kind.
func (l *Limiter) Buckets() (address, account int) { return l.addr.len(), l.acct.len() }

func (l *Limiter) now() int64 { return int64(time.Since(l.epoch)) }

// use is which bucket paid a call.
type use uint8

const (
	useNone    use = iota // refused
	useBudget             // the budget
	useReserve            // the cancel reserve
)

// state is one key's budget and cancel reserve at time at (ns since the
// limiter's epoch): 24 bytes.
type state struct {
	tokens, reserve float64
	at              int64
}

// table is the buckets of one kind.
type table[K comparable] struct {
	budget, reserve Bucket
	mu              sync.Mutex
	m               map[K]state // at most KeysMax
	// blockedUntil: the table is full of busy buckets until then (the
	// soonest one refills to full); no sweep before it.
	blockedUntil int64
}

func newTable[K comparable](budget, reserve Bucket) table[K] {
	return table[K]{budget: budget, reserve: reserve, m: map[K]state{}}
}

func (t *table[K]) on() bool { return t.budget.On() }

func (t *table[K]) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// refill brings s to now.
func (t *table[K]) refill(s *state, now int64) {
	if dt := float64(now-s.at) / 1e9; dt > 0 {
		s.tokens = min(t.budget.Capacity, s.tokens+dt*t.budget.RefillPerS)
		s.reserve = min(t.reserve.Capacity, s.reserve+dt*t.reserve.RefillPerS)
		s.at = now
	}
}

func (t *table[K]) full(s *state) bool {
	return s.tokens >= t.budget.Capacity && s.reserve >= t.reserve.Capacity
}

// take charges w to k's bucket, or reports why not.
func (t *table[K]) take(k K, now int64, w float64, cancelOnly bool) (Refusal, use) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, found := t.m[k]
	switch {
	case found:
		t.refill(&s, now)
	case len(t.m) >= KeysMax && !t.sweep(now):
		return Refusal{TableFull: true, Bucket: t.budget, RetryAfter: time.Duration(t.blockedUntil - now)}, useNone
	default:
		s = state{tokens: t.budget.Capacity, reserve: t.reserve.Capacity, at: now}
	}
	u := useNone
	switch {
	case s.tokens >= w:
		s.tokens -= w
		u = useBudget
	case cancelOnly && s.reserve >= w:
		s.reserve -= w
		u = useReserve
	default:
		r := Refusal{Tokens: s.tokens, Bucket: t.budget, RetryAfter: retryAfter(s.tokens, w, t.budget)}
		if cancelOnly {
			if ra := retryAfter(s.reserve, w, t.reserve); ra >= 0 && (r.RetryAfter < 0 || ra < r.RetryAfter) {
				r.RetryAfter = ra
			}
		}
		return r, useNone
	}
	t.m[k] = s
	return Refusal{}, u
}

// give returns w to the bucket u took it from (a call the other kind
// refused).
func (t *table[K]) give(k K, now int64, w float64, u use) {
	if u == useNone {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[k]
	if !ok {
		return
	}
	t.refill(&s, now)
	if u == useBudget {
		s.tokens = min(t.budget.Capacity, s.tokens+w)
	} else {
		s.reserve = min(t.reserve.Capacity, s.reserve+w)
	}
	t.m[k] = s
}

// sweep evicts the buckets that have refilled to full and reports whether
// that made room. A table of busy buckets is not swept again before the
// soonest of them is full.
func (t *table[K]) sweep(now int64) bool {
	if now < t.blockedUntil {
		return false
	}
	soonest := time.Duration(math.MaxInt64)
	for k, s := range t.m {
		t.refill(&s, now)
		if t.full(&s) {
			delete(t.m, k)
			continue
		}
		soonest = min(soonest, max(untilFull(s.tokens, t.budget), untilFull(s.reserve, t.reserve)))
	}
	if len(t.m) < KeysMax {
		return true
	}
	t.blockedUntil = now + int64(soonest)
	return false
}

// state returns k's budget now, without storing anything.
func (t *table[K]) state(k K, now int64) State {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[k]
	if !ok {
		return State{Tokens: t.budget.Capacity, Reserve: t.reserve.Capacity}
	}
	t.refill(&s, now)
	return State{Live: true, Tokens: s.tokens, Reserve: s.reserve}
}

// retryAfter is how long until a bucket b holding tokens holds w: negative
// when it never will.
func retryAfter(tokens, w float64, b Bucket) time.Duration {
	if w > b.Capacity || b.RefillPerS <= 0 {
		return -1
	}
	return time.Duration(math.Ceil((w - tokens) / b.RefillPerS * 1e9))
}

// untilFull is how long until a bucket b holding tokens is full.
func untilFull(tokens float64, b Bucket) time.Duration {
	if tokens >= b.Capacity {
		return 0
	}
	if b.RefillPerS <= 0 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Ceil((b.Capacity - tokens) / b.RefillPerS * 1e9))
}
