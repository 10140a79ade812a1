package core

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/binread"
	"github.com/ledgervenue/node/core/clob"
)

// Snapshot layout (all integers big-endian; accounts sorted by address,
// tokens by token address, so the bytes depend only on the state):
//
//	+---------+---------+-----+----------+-------------+-------------+---------+----------+
//	| "LSNAP7"| chainID | seq | baseFee  | feesBurned  | clockOffset | nAccts  | accounts |
//	|  6 B    |  u64    | u64 | 32 B     | 32 B        |  i64 (µs)   | u32     |   ...    |
//	+---------+---------+-----+----------+-------------+-------------+---------+----------+
//	| issued: tokenAmounts | obFees: tokenAmounts | withdrawals (withdraw.go) | mints (mint.go) | engine (clob.Engine.AppendSnapshot) |
//	+----------------------+----------------------+---------------------------+-----------------+-------------------------------------+
//	account:      | address 20 B | nonce u64 | newest 32 B | locked u8 | native balance | nTokens u32 | (token 20 B | balance)* |
//	balance:      | cash 32 B | locked 32 B |   (the native balance adds | debt 32 B |)
//	tokenAmounts: | n u32 | (token 20 B | amount 32 B)* |
//
// newest is the hash of the account's newest transaction (zero, and locked
// 0, for an account that never sent one or none since anvil_setNonce);
// locked is 0 or 1 (recovery.go). clockOffset is controls.go's.
// The pending marks are not part of it (see the package doc). Nor is the
// orderbook's configuration (Config.Orderbook): LoadSnapshot takes it from
// its caller, nor the bridge's (Config.Bridge, WithdrawalsPerBatchMax), nor
// Config.MintAllowed. No
// token list holds NativeToken except issued, obFees and withdrawn (an
// account's native balance has its own field).
const snapshotMagic = "LSNAP7"

// AppendSnapshot appends the canonical encoding of the state to dst.
// Besides dst's growth it allocates only its sort buffers (the accounts,
// and one reused for token keys): a caller that snapshots repeatedly passes
// its previous buffer's [:0].
func (l *Ledger) AppendSnapshot(dst []byte) []byte {
	dst = append(dst, snapshotMagic...)
	dst = binary.BigEndian.AppendUint64(dst, l.chainID)
	dst = binary.BigEndian.AppendUint64(dst, l.seq)
	dst = binread.AppendU256(dst, &l.baseFee)
	dst = binread.AppendU256(dst, &l.feesBurned)
	dst = binary.BigEndian.AppendUint64(dst, uint64(l.clockOffsetUs))
	// Sorting (address, account) pairs saves looking every account up again.
	accts := make([]accountEntry, 0, len(l.accounts))
	for a, acc := range l.accounts {
		accts = append(accts, accountEntry{a, acc})
	}
	slices.SortFunc(accts, func(x, y accountEntry) int { return compareAddress(&x.addr, &y.addr) })
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(accts)))
	var tokens []Address // reused by every account
	for i := range accts {
		a, acc := &accts[i].addr, accts[i].acc
		dst = append(dst, a[:]...)
		dst = binary.BigEndian.AppendUint64(dst, acc.Nonce)
		dst = appendLock(dst, acc)
		dst = binread.AppendU256(appendBalance(dst, &acc.Native), &acc.Native.Debt)
		tokens = appendSortedKeys(tokens[:0], acc.tokens)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(tokens)))
		for _, t := range tokens {
			dst = append(dst, t[:]...)
			dst = appendBalance(dst, acc.tokens[t])
		}
	}
	dst = appendTokenAmounts(dst, l.issued, tokens[:0])
	dst = appendTokenAmounts(dst, l.obFees, tokens[:0])
	dst = l.appendWithdrawals(dst, tokens[:0])
	dst = l.appendMints(dst, tokens[:0])
	return l.engine.AppendSnapshot(dst)
}

type accountEntry struct {
	addr Address
	acc  *Account
}

func appendBalance(dst []byte, b *Balance) []byte {
	return binread.AppendU256(binread.AppendU256(dst, &b.Cash), &b.Locked)
}

func appendTokenAmounts(dst []byte, m map[Address]*uint256.Int, scratch []Address) []byte {
	tokens := appendSortedKeys(scratch, m)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(tokens)))
	for _, t := range tokens {
		dst = append(dst, t[:]...)
		dst = binread.AppendU256(dst, m[t])
	}
	return dst
}

// StateHash is keccak256 of the snapshot: equal hashes mean equal states.
func (l *Ledger) StateHash() Hash { return Keccak256Hash(l.AppendSnapshot(nil)) }

// CheckSupply verifies the conservation invariant for every token: cash
// (locked included) minus debt, minus the cost of the open perp positions,
// plus fees taken and withdrawals burned equals everything ever issued
// (genesis and deposits)
// (docs/perps.md, "Invariants"); no account has more locked than cash, and
// none has debt and free cash at once.
func (l *Ledger) CheckSupply() bool {
	sums := make(map[Address]*uint256.Int, len(l.issued))
	var debt uint256.Int
	for _, acc := range l.accounts { // order-independent sums
		if !addCash(sums, NativeToken, &acc.Native) {
			return false
		}
		debt.Add(&debt, &acc.Native.Debt)
		for t, b := range acc.tokens {
			if !addCash(sums, t, b) || !b.Debt.IsZero() {
				return false
			}
		}
	}
	return l.supplyMatches(sums, &debt)
}

// addCash adds b's cash to sums[token]; false if b locks more than its
// cash, or has debt beside free cash.
func addCash(sums map[Address]*uint256.Int, token Address, b *Balance) bool {
	if b.Cash.Lt(&b.Locked) || !b.Debt.IsZero() && !b.Cash.Eq(&b.Locked) {
		return false
	}
	addTo(sums, token, &b.Cash)
	return true
}

// supplyMatches finishes CheckSupply from the sums of every balance's cash
// and the native debt: Σ Cash + fees + withdrawn = issued + Σ Debt + Σ
// cost of the perp positions (signed; each side moved to where it is
// positive).
func (l *Ledger) supplyMatches(sums map[Address]*uint256.Int, debt *uint256.Int) bool {
	addTo(sums, NativeToken, &l.feesBurned)
	for t, f := range l.obFees {
		addTo(sums, t, f)
	}
	for t, w := range l.wd.withdrawn {
		addTo(sums, t, w)
	}
	issued := make(map[Address]*uint256.Int, len(l.issued))
	for t, v := range l.issued {
		addTo(issued, t, v)
	}
	addTo(issued, NativeToken, debt)
	if cost := l.engine.PerpCost(); cost.Neg {
		addTo(sums, NativeToken, &cost.Abs)
	} else {
		addTo(issued, NativeToken, &cost.Abs)
	}
	return equalAmounts(sums, issued) && equalAmounts(issued, sums)
}

// equalAmounts reports whether every non-zero amount of a equals b's.
func equalAmounts(a, b map[Address]*uint256.Int) bool {
	for t, v := range a {
		if w := b[t]; !v.IsZero() && (w == nil || !v.Eq(w)) {
			return false
		}
	}
	return true
}

// appendSortedKeys appends m's keys to dst in ascending order.
func appendSortedKeys[V any](dst []Address, m map[Address]V) []Address {
	for k := range m {
		dst = append(dst, k)
	}
	slices.SortFunc(dst, func(a, b Address) int { return compareAddress(&a, &b) })
	return dst
}

// compareAddress orders addresses as bytes.Compare does. Addresses are
// mostly keccak outputs, so their first 8 bytes, compared as one integer,
// almost always decide (bytes.Compare alone made sorting half the cost of
// a snapshot of 10k accounts).
func compareAddress(a, b *Address) int {
	x, y := binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return bytes.Compare(a[8:], b[8:])
}

// LoadSnapshot rebuilds a ledger from a snapshot AppendSnapshot wrote, with
// cfg.Orderbook as the engine's Limits. The chain id is the snapshot's and
// must be cfg.ChainID; the base fee is the snapshot's (cfg.BaseFee is only
// the genesis value). Pending marks are not in a snapshot: every account
// loads with none.
//
// The loaded ledger behaves exactly like the one that wrote the snapshot:
// the same inputs give byte-identical records and state hashes.
//
// snap comes from disk and may be corrupt, so LoadSnapshot never panics on
// it. It refuses every input that does not decode exactly (truncated or
// trailing bytes, counts that do not fit, accounts or tokens out of order or
// repeated, a native token among the tokens, a pending withdrawal that
// admission could not have queued (loadWithdrawals), everything
// clob.LoadEngine refuses), and then checks the rebuilt state against the invariants the
// writer kept: conservation (as CheckSupply), and locked amounts equal to
// the orderbook's reservations (clob.Engine.VisitLocks). Whatever loads
// re-encodes to the same bytes. snap is not retained.
func LoadSnapshot(cfg Config, snap []byte) (*Ledger, error) {
	l, err := loadSnapshot(cfg, snap)
	if err != nil {
		return nil, fmt.Errorf("cannot load ledger snapshot: %w", err)
	}
	return l, nil
}

func loadSnapshot(cfg Config, snap []byte) (*Ledger, error) {
	r := snapReader{binread.Reader{B: snap}}
	if m := r.Take(len(snapshotMagic)); r.Err == nil && string(m) != snapshotMagic {
		r.Fail("magic %q, want %q", m, snapshotMagic)
	}
	l := &Ledger{chainID: r.U64(), seq: r.U64(), wd: newWithdrawals(&cfg), mint: mints{allowed: cfg.MintAllowed}}
	if r.Err == nil && l.chainID != cfg.ChainID {
		return nil, fmt.Errorf("chain id %d, configured %d", l.chainID, cfg.ChainID)
	}
	r.U256(&l.baseFee)
	r.U256(&l.feesBurned)
	l.clockOffsetUs = int64(r.U64())
	holdings := l.loadAccounts(&r)
	l.issued = r.tokenAmounts()
	l.obFees = r.tokenAmounts()
	l.loadWithdrawals(&r)
	l.loadMints(&r)
	if r.Err != nil {
		return nil, r.Err
	}
	engine, rest, err := clob.LoadEngine(cfg.Orderbook, snap[r.Off:])
	if err != nil {
		return nil, fmt.Errorf("engine at byte %d: %w", r.Off, err)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d bytes after the engine", len(rest))
	}
	l.engine = engine
	if !l.checkSupply(holdings) {
		return nil, errors.New("balances, fees and issued amounts do not add up")
	}
	if err := l.checkLocks(holdings); err != nil {
		return nil, err
	}
	return l, nil
}

// holding names one balance of a loaded ledger, in snapshot order.
type holding struct {
	token, owner Address
	b            *Balance
}

// Encoded sizes of the smallest account and token entry, to bound counts
// by the bytes left before allocating for them.
const (
	accountSizeMin = 20 + 8 + 33 + 96 + 4
	tokenSizeMin   = 20 + 32
	balanceSize    = 64
	// balanceSlabSize is how many token balances a loader allocates at once.
	balanceSlabSize = 1024
)

// loadAccounts reads the accounts and returns every balance, in snapshot
// order (so that what checkLocks reports does not depend on map order).
// Accounts are allocated in one slab and token balances in slabs of
// balanceSlabSize, so that a load allocates about once per account (its
// token map) rather than three times.
func (l *Ledger) loadAccounts(r *snapReader) []holding {
	n := r.Count(accountSizeMin)
	l.accounts = make(map[Address]*Account, n)
	slab := make([]Account, n)
	holdings := make([]holding, 0, 2*n) // most accounts hold one token
	var bals []Balance
	var prev Address
	for i := 0; i < n && r.Err == nil; i++ {
		a, acc := r.addr(), &slab[i]
		if i > 0 && bytes.Compare(prev[:], a[:]) >= 0 {
			r.Fail("account %x after %x", a, prev)
		}
		prev = a
		acc.Nonce = r.U64()
		r.lock(acc)
		r.balance(&acc.Native)
		r.U256(&acc.Native.Debt)
		holdings = append(holdings, holding{NativeToken, a, &acc.Native})
		holdings = l.loadTokens(r, a, acc, holdings, &bals)
		l.accounts[a] = acc
	}
	return holdings
}

// loadTokens reads one account's token balances, taking them from *slab.
func (l *Ledger) loadTokens(r *snapReader, a Address, acc *Account, holdings []holding, slab *[]Balance) []holding {
	n := r.Count(tokenSizeMin + balanceSize)
	if n == 0 {
		return holdings
	}
	acc.tokens = make(map[Address]*Balance, n)
	if cap(*slab)-len(*slab) < n {
		*slab = make([]Balance, 0, max(n, balanceSlabSize))
	}
	bals := (*slab)[len(*slab) : len(*slab)+n]
	*slab = (*slab)[:len(*slab)+n]
	var prev Address
	for i := 0; i < n && r.Err == nil; i++ {
		t := r.addr()
		if t == NativeToken || i > 0 && bytes.Compare(prev[:], t[:]) >= 0 {
			r.Fail("account %x: token %x after %x", a, t, prev)
		}
		prev = t
		r.balance(&bals[i])
		acc.tokens[t] = &bals[i]
		holdings = append(holdings, holding{t, a, &bals[i]})
	}
	return holdings
}

// checkSupply is CheckSupply over the loaded balances (a slice is faster
// to walk than every account's token map).
func (l *Ledger) checkSupply(holdings []holding) bool {
	sums := make(map[Address]*uint256.Int, len(l.issued))
	var debt uint256.Int
	for _, h := range holdings {
		if !addCash(sums, h.token, h.b) {
			return false
		}
		debt.Add(&debt, &h.b.Debt)
	}
	return l.supplyMatches(sums, &debt)
}

// checkLocks verifies, from the ledger's side, the invariant that joins the
// two halves of a snapshot: every holding's locked amount is what the
// orderbook holds locked for it (clob.Engine.VisitLocks), no more, no less.
func (l *Ledger) checkLocks(holdings []holding) error {
	type key struct{ token, owner Address }
	locks := make(map[key]uint256.Int)
	overflow := false
	l.engine.VisitLocks(func(token, owner clob.Address, amount *uint256.Int) {
		k := key{Address(token), Address(owner)}
		v := locks[k]
		_, o := v.AddOverflow(&v, amount)
		overflow = overflow || o
		locks[k] = v
	})
	if overflow {
		return errors.New("the orderbook's reservations overflow 256 bits")
	}
	for _, h := range holdings {
		k := key{h.token, h.owner}
		if want := locks[k]; !h.b.Locked.Eq(&want) {
			return fmt.Errorf("%x locks %s of token %x, the orderbook %s", h.owner, h.b.Locked.Dec(), h.token, want.Dec())
		}
		delete(locks, k)
	}
	var err error
	l.engine.VisitLocks(func(token, owner clob.Address, amount *uint256.Int) {
		if v, ok := locks[key{Address(token), Address(owner)}]; ok && !v.IsZero() && err == nil {
			err = fmt.Errorf("the orderbook locks %s of token %x for %x, which holds none", v.Dec(), token, owner)
		}
	})
	return err
}

// snapReader is the shared snapshot reader with this package's field
// types.
type snapReader struct{ binread.Reader }

func (r *snapReader) addr() (a Address) {
	copy(a[:], r.Take(len(a)))
	return a
}

func (r *snapReader) balance(b *Balance) {
	r.U256(&b.Cash)
	r.U256(&b.Locked)
}

// tokenAmounts reads a tokenAmounts list into a map.
func (r *snapReader) tokenAmounts() map[Address]*uint256.Int {
	n := r.Count(tokenSizeMin)
	m := make(map[Address]*uint256.Int, n)
	amounts := make([]uint256.Int, n)
	var prev Address
	for i := 0; i < n && r.Err == nil; i++ {
		t := r.addr()
		if i > 0 && bytes.Compare(prev[:], t[:]) >= 0 {
			r.Fail("token %x after %x", t, prev)
		}
		prev = t
		r.U256(&amounts[i])
		m[t] = &amounts[i]
	}
	return m
}
