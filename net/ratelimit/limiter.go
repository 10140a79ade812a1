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
// less than zero; a pass takes no lock and costs no allocation once its
// bucket exists (one compare-and-swap per budget).
package ratelimit

import (
	"math"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// KeysMax bounds the live buckets of each kind (addresses, accounts). A
// bucket is a map entry of at most BytesPerBucket, so a full table holds at
// most 8 MiB. Past it, a new key gets a bucket only once an idle
// one has refilled to full and is evicted; until then its calls are
// refused ("table full").
const KeysMax = 65536

// BytesPerBucket bounds the memory of one live bucket, map overhead
// included (TestBytesPerBucket measures about 96 bytes on amd64 with both
// tables full).
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
		r, use := l.addr.take(ip, now, l.epoch, fw, cancelOnly)
		if use == useNone {
			r.Kind, r.Weight = KindAddress, w
			return r, false
		}
		addrUse = use
	}
	if acct != nil && l.acct.on() {
		if r, use := l.acct.take(*acct, now, l.epoch, fw, cancelOnly); use == useNone {
			l.addr.give(ip, fw, addrUse)
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

// The buckets are kept as GCRA (the generic cell rate algorithm, the same
// as a token bucket): a bucket of capacity C refilled every T ns per unit
// is one time, its theoretical arrival time tat: it holds C - (tat - now)/T
// units (C when tat <= now: full). A call of weight w passes if
// max(tat, now) + w·T - now <= C·T, and moves tat there. One
// compare-and-swap, no lock: calls from one address on different event
// loops do not queue behind each other.

// evicted marks a bucket a sweep removed from its table: a call that
// finds it looks the key up again.
const evicted = math.MaxInt64

// bucket is one key's budget and cancel reserve: 16 bytes.
type bucket struct{ tat, rtat atomic.Int64 }

// gcra is a bucket's shape in the algorithm's terms.
type gcra struct {
	perUnit float64 // T, ns per unit; +Inf when it never refills
	tau     float64 // C·T, the time a full bucket covers
	on      bool    // capacity > 0
}

func newGCRA(b Bucket) gcra {
	g := gcra{perUnit: math.Inf(1), on: b.Capacity > 0}
	if b.RefillPerS > 0 {
		g.perUnit = 1e9 / b.RefillPerS
	}
	g.tau = b.Capacity * g.perUnit
	if b.Capacity == 0 {
		g.tau = 0
	}
	return g
}

// take charges w to the bucket at tat, or returns how long until it could
// (negative: never) and what it holds. gone: the bucket left its table.
// now may be stale (the goroutine was descheduled after reading it, while
// others moved tat on): before it refuses, take decides again with the
// clock read after each load of tat. Whoever wrote that tat read its clock
// before writing it, so against a clock read after the load tat is ahead
// by charged cost only, however long this goroutine was descheduled.
func (g *gcra) take(tat *atomic.Int64, now int64, epoch time.Time, w float64) (ok, gone bool, wait time.Duration, tokens float64) {
	cost := w * g.perUnit
	fresh := false
	for {
		old := tat.Load()
		if old == evicted {
			return false, true, 0, 0
		}
		if fresh {
			now = int64(time.Since(epoch))
		}
		base := max(old, now)
		behind := float64(base - now)
		if !g.on || behind+cost > g.tau {
			if !fresh {
				fresh = true
				continue
			}
			tokens = max(0, (g.tau-behind)/g.perUnit)
			switch {
			case !g.on || cost > g.tau || math.IsInf(g.perUnit, 1):
				wait = -1
			default:
				wait = time.Duration(math.Ceil(behind + cost - g.tau))
			}
			return false, false, wait, tokens
		}
		if tat.CompareAndSwap(old, base+int64(math.Ceil(cost))) {
			return true, false, 0, 0
		}
	}
}

// give returns w units to the bucket at tat.
func (g *gcra) give(tat *atomic.Int64, w float64) {
	back := int64(w * g.perUnit)
	for {
		old := tat.Load()
		if old == evicted || tat.CompareAndSwap(old, old-back) {
			return
		}
	}
}

// holds returns what the bucket at tat holds now.
func (g *gcra) holds(tat int64, now int64) float64 {
	if !g.on {
		return 0
	}
	return max(0, (g.tau-float64(max(tat, now)-now))/g.perUnit)
}

// table is the buckets of one kind.
type table[K comparable] struct {
	shape           Bucket
	budget, reserve gcra
	mu              sync.RWMutex  // the map; the buckets are atomics
	m               map[K]*bucket // at most KeysMax
	// blockedUntil: the table is full of busy buckets until then (the
	// soonest one refills to full); no sweep before it. Under mu.
	blockedUntil int64
}

func newTable[K comparable](budget, reserve Bucket) table[K] {
	return table[K]{shape: budget, budget: newGCRA(budget), reserve: newGCRA(reserve), m: map[K]*bucket{}}
}

func (t *table[K]) on() bool { return t.shape.On() }

func (t *table[K]) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.m)
}

// lookup returns k's bucket, made when absent, or the refusal of a full
// table.
func (t *table[K]) lookup(k K, now int64) (*bucket, *Refusal) {
	t.mu.RLock()
	b := t.m[k]
	t.mu.RUnlock()
	if b != nil {
		return b, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if b = t.m[k]; b != nil {
		return b, nil
	}
	if len(t.m) >= KeysMax && !t.sweep(now) {
		return nil, &Refusal{TableFull: true, Bucket: t.shape, RetryAfter: time.Duration(t.blockedUntil - now)}
	}
	b = new(bucket) // tat 0: full
	t.m[k] = b
	return b, nil
}

// take charges w to k's bucket, or reports why not.
func (t *table[K]) take(k K, now int64, epoch time.Time, w float64, cancelOnly bool) (Refusal, use) {
	for {
		b, full := t.lookup(k, now)
		if full != nil {
			return *full, useNone
		}
		ok, gone, wait, tokens := t.budget.take(&b.tat, now, epoch, w)
		if gone {
			continue
		}
		if ok {
			return Refusal{}, useBudget
		}
		r := Refusal{Tokens: tokens, Bucket: t.shape, RetryAfter: wait}
		if !cancelOnly || !t.reserve.on {
			return r, useNone
		}
		ok, gone, rwait, _ := t.reserve.take(&b.rtat, now, epoch, w)
		switch {
		case gone:
			continue
		case ok:
			return Refusal{}, useReserve
		case rwait >= 0 && (r.RetryAfter < 0 || rwait < r.RetryAfter):
			r.RetryAfter = rwait
		}
		return r, useNone
	}
}

// give returns w to the bucket u took it from (a call the other kind
// refused).
func (t *table[K]) give(k K, w float64, u use) {
	if u == useNone {
		return
	}
	t.mu.RLock()
	b := t.m[k]
	t.mu.RUnlock()
	switch {
	case b == nil:
	case u == useBudget:
		t.budget.give(&b.tat, w)
	default:
		t.reserve.give(&b.rtat, w)
	}
}

// sweep evicts the buckets that have refilled to full and reports whether
// that made room. A table of busy buckets is not swept again before the
// soonest of them is full.
// REQUIRES: t.mu held for writing.
func (t *table[K]) sweep(now int64) bool {
	if now < t.blockedUntil {
		return false
	}
	soonest := int64(math.MaxInt64)
	for k, b := range t.m {
		// Full when both times are past; marked evicted only if no call
		// charged its budget meanwhile (a call that finds the mark looks
		// the key up again).
		tat, rt := b.tat.Load(), b.rtat.Load()
		if tat <= now && rt <= now && b.tat.CompareAndSwap(tat, evicted) {
			delete(t.m, k)
			continue
		}
		soonest = min(soonest, max(tat, rt)-now)
	}
	if len(t.m) < KeysMax {
		return true
	}
	t.blockedUntil = now + soonest
	return false
}

// state returns k's budget now, without changing anything.
func (t *table[K]) state(k K, now int64) State {
	t.mu.RLock()
	b := t.m[k]
	t.mu.RUnlock()
	if b == nil {
		return State{Tokens: t.budget.holds(0, now), Reserve: t.reserve.holds(0, now)}
	}
	return State{Live: true, Tokens: t.budget.holds(b.tat.Load(), now), Reserve: t.reserve.holds(b.rtat.Load(), now)}
}
