package clob

import (
	"fmt"
	"testing"

	"github.com/ethereum/go-ethereum/crypto/keccak"
	"github.com/holiman/uint256"
)

// benchBook is a book of resting orders kept in steady state: every
// iteration runs two ticks of benchIntents new intents each. Tick 1: taker
// buys (IOC, 1 lot) take the best `take` ask levels while makers add as many
// bid levels just above the best bid; tick 2: taker sells take those bids
// back while makers restore the ask levels. After both ticks the book holds
// the same orders at the same prices.
type benchBook struct {
	b      *testing.B
	h      *harness
	acc    *benchAccounts
	a      Admission
	env    Envelope
	nowUs  int64
	bestB  int64 // best bid, steps
	bestA  int64 // best ask, steps
	take   int   // levels each tick takes
	owners [8]Address
	cpuOff int64 // process CPU time spent with the timer stopped
	// prepared: the envelopes carry their order ids (PrepareIDs), as the
	// node's event loops hash them before the sequencer; computed for each
	// tick with the timer stopped. Otherwise Admit hashes them.
	prepared bool
	ttl      uint64 // of the orders admit submits
	ids      []Hash
	nextID   int
	idh      keccakHasher
}

const (
	benchPerLevel = 100
	benchIntents  = 10_000 // new intents per tick
	benchTakeMax  = 50     // levels one tick takes at most: half the intents take, half make
)

func newBenchBook(b *testing.B, resting int) *benchBook {
	h := newHarness(b, Limits{OrdersMax: resting + 2*benchIntents, PendingMax: 1 << 14})
	bb := &benchBook{b: b, h: h, acc: &benchAccounts{}, env: Envelope{Intents: make([]Intent, 1)}, nowUs: 100}
	bb.idh.h = keccak.NewLegacyKeccak256().(keccakState)
	for i := range bb.owners {
		bb.owners[i] = Address{byte(i + 1)}
		bb.acc.bal[tBase[0]][i+1].cash.Lsh(uint256.NewInt(1), 200)
		bb.acc.bal[tQuote[0]][i+1].cash.Lsh(uint256.NewInt(1), 200)
	}
	levels := max(resting/2/benchPerLevel, 1)
	bb.take = min(levels, benchTakeMax)
	bb.bestB = 1_000_000
	bb.bestA = bb.bestB + 2*benchTakeMax + 1
	T := h.iv
	n := 0
	for lv := range levels {
		for range benchPerLevel {
			bb.admit(Sell, bb.bestA+int64(lv), 0, n)
			bb.admit(Buy, bb.bestB-int64(lv), 0, n+1)
			n += 2
			if n%(1<<13) == 0 {
				h.e.Tick(T, bb.acc, &h.out)
				T += h.iv
				bb.nowUs = T - h.iv + 1
			}
		}
	}
	h.e.Tick(T, bb.acc, &h.out)
	bb.nowUs = T + 1
	return bb
}

// admit submits one 1-lot limit order (with bb.ttl) as signer i.
func (bb *benchBook) admit(side Side, steps int64, flags uint8, i int) {
	in := &bb.env.Intents[0]
	*in = Intent{Kind: IntentSubmit, Book: tBookID, Side: side, Type: Limit, Flags: flags,
		Deadline: uint64(landing(bb.nowUs, bb.h.iv)), TTL: bb.ttl}
	in.Size.Set(e15)
	in.Price.SetUint64(uint64(steps))
	in.Price.Mul(&in.Price, &bb.h.e.books[0].u.tick)
	bb.send(i)
}

// cancel cancels order id as signer i.
func (bb *benchBook) cancel(id *Hash, i int) {
	bb.env.Intents[0] = Intent{Kind: IntentCancel, Book: tBookID, OrderID: *id, Deadline: uint64(landing(bb.nowUs, bb.h.iv))}
	bb.send(i)
}

// send admits bb.env as signer i, with its prepared id if bb.prepared.
func (bb *benchBook) send(i int) {
	a := &bb.a
	a.Signer = bb.owners[i%len(bb.owners)]
	a.Owner, a.NowUs = a.Signer, bb.nowUs
	a.Nonce++
	if bb.prepared {
		bb.env.Intents[0].ID = bb.ids[bb.nextID]
		bb.nextID++
		bb.env.HasIDs, bb.env.IDSigner, bb.env.IDNonce = true, a.Signer, a.Nonce
	}
	if r := bb.h.e.Admit(a, &bb.env, bb.acc); r != OK {
		panic(fmt.Sprintf("bench admit: %v", r))
	}
}

// tick admits bb.take×benchPerLevel crossing takers and as many makers on
// the same side, plus idle IOC orders that cross nothing (cancelled at the
// tick's end) up to benchIntents, then runs one tick.
func (bb *benchBook) tick(side Side, takerSteps, idleSteps int64, makerSteps func(i int) int64) {
	k := bb.take * benchPerLevel
	if bb.prepared {
		bb.prepareIDs(benchIntents, func(j int) int { // k takers i and makers i+1 interleaved, then idle ones
			if j < 2*k {
				return j/2 + j%2
			}
			return j - 2*k
		})
	}
	for i := range k {
		bb.admit(side, takerSteps, FlagIOC, i)
		bb.admit(side, makerSteps(i), 0, i+1)
	}
	for i := range benchIntents - 2*k {
		bb.admit(side, idleSteps, FlagIOC, i)
	}
	T := landing(bb.nowUs, bb.h.iv)
	bb.h.e.Tick(T, bb.acc, &bb.h.out)
	bb.nowUs = T + 1
}

// prepareIDs computes, with the timer stopped, the ids of the next n
// admissions, the j-th as signer signer(j) (admit's and cancel's i).
func (bb *benchBook) prepareIDs(n int, signer func(j int) int) {
	bb.b.StopTimer()
	c0 := cpuNs()
	bb.ids, bb.nextID = bb.ids[:0], 0
	nonce := bb.a.Nonce
	for j := range n {
		nonce++
		var id Hash
		bb.idh.orderID(&id, bb.owners[signer(j)%len(bb.owners)], nonce, 0)
		bb.ids = append(bb.ids, id)
	}
	bb.cpuOff += cpuNs() - c0
	bb.b.StartTimer()
}

// round runs the two ticks that bring the book back to where it was.
func (bb *benchBook) round() {
	bA, bB, take := bb.bestA, bb.bestB, int64(bb.take)
	// Tick 1: buys take asks [bA, bA+take); new bids at [bB+1, bB+take].
	bb.tick(Buy, bA+take-1, bB, func(i int) int64 { return bB + 1 + int64(i/benchPerLevel) })
	// Tick 2: sells take the new bids; new asks at [bA, bA+take) again.
	bb.tick(Sell, bB+1, bA, func(i int) int64 { return bA + int64(i/benchPerLevel) })
}

// BenchmarkTick measures the engine as the sequencer drives it: envelopes
// arrive with their order ids computed (PrepareIDs on the event loops).
// BenchmarkTickHashed is the same with Admit hashing every id itself (a
// replay, or a caller that does not prepare).
func BenchmarkTick(b *testing.B)       { benchmarkTick(b, true) }
func BenchmarkTickHashed(b *testing.B) { benchmarkTick(b, false) }

func benchmarkTick(b *testing.B, prepared bool) {
	for _, resting := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("resting=%d", resting), func(b *testing.B) {
			bb := newBenchBook(b, resting)
			bb.prepared = prepared
			bb.round() // warm up scratch buffers
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuNs()
			bb.cpuOff = 0
			for b.Loop() {
				bb.round()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*benchIntents), "ns/order")
			b.ReportMetric(float64(cpuNs()-cpu0-bb.cpuOff)/float64(b.N)/(2*benchIntents), "cpu-ns/order")
			if !bb.h.out.Books[0].Traded || bb.h.e.books[0].live() < resting {
				b.Fatalf("book not in steady state: %d live", bb.h.e.books[0].live())
			}
			sink = bb.h.out.Books[0].VolumeBase
		})
	}
}

// BenchmarkExpiryChurn measures a book under market makers whose quotes
// carry a ttl, as the node sees them: every tick churnMakers new 1-lot
// quotes (ttl churnTTL ticks) around a fixed spread, the cancel of half of
// the quotes placed churnCancelAge ticks before, and churnTakers IOC
// orders that each take one quote at the best price. A quote thus leaves
// by a fill, a cancel before its expiry, or its expiry; in steady state
// about 60 000 rest. Reported per admitted intent.
func BenchmarkExpiryChurn(b *testing.B) {
	const (
		churnMakers    = 2500
		churnTTL       = 40 // 2 s at a 50 ms tick
		churnCancelAge = 10
		churnTakers    = 500
		churnLevels    = 50
		churnIntents   = churnMakers + churnMakers/2 + churnTakers
	)
	bb := newBenchBook(b, 0)
	bb.prepared = true
	bb.h.e.books[0].ordersMax = churnMakers*churnTTL + 2*churnIntents
	bestB, bestA := bb.bestB, bb.bestB+2*churnLevels
	var placed [churnTTL][churnMakers]Hash // quote ids, by tick mod churnTTL
	tick := 0
	round := func() {
		bb.prepareIDs(churnIntents, func(j int) int {
			if k := j - churnMakers; k >= 0 && k < churnMakers/2 {
				return 2*k + k%2 // the canceller owns its target
			}
			return j
		})
		mine, old := &placed[tick%churnTTL], &placed[(tick+churnTTL-churnCancelAge)%churnTTL]
		bb.ttl = churnTTL * uint64(bb.h.iv)
		for i := range churnMakers {
			mine[i] = bb.ids[bb.nextID]
			if i%2 == 0 {
				bb.admit(Buy, bestB-int64(i/2%churnLevels), 0, i)
			} else {
				bb.admit(Sell, bestA+int64(i/2%churnLevels), 0, i)
			}
		}
		for k := range churnMakers / 2 {
			if t := 2*k + k%2; tick >= churnCancelAge { // a buy and a sell in turn
				bb.cancel(&old[t], t)
			} else {
				bb.admit(Buy, bestB-churnLevels, 0, t) // no quote that old yet: use the nonce
			}
		}
		bb.ttl = 0
		for i := range churnTakers {
			j := churnMakers + churnMakers/2 + i
			if i%2 == 0 {
				bb.admit(Buy, bestA+churnLevels, FlagIOC, j)
			} else {
				bb.admit(Sell, bestB-churnLevels, FlagIOC, j)
			}
		}
		T := landing(bb.nowUs, bb.h.iv)
		bb.h.e.Tick(T, bb.acc, &bb.h.out)
		bb.nowUs = T + 1
		tick++
	}
	for range 2 * churnTTL { // reach the steady state
		round()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuNs()
	bb.cpuOff = 0
	for b.Loop() {
		round()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/churnIntents, "ns/intent")
	b.ReportMetric(float64(cpuNs()-cpu0-bb.cpuOff)/float64(b.N)/churnIntents, "cpu-ns/intent")
	var expired int
	for _, ev := range bb.h.out.Events {
		if ev.Kind == EventExpire {
			expired++
		}
	}
	if !bb.h.out.Books[0].Traded || expired == 0 {
		b.Fatalf("no fills or no expiries: %d expired", expired)
	}
}

var sink uint256.Int

// benchAccounts is a flat ledger for benchmarks: tokens and owners are told
// apart by their first byte, so that the engine, not a map, is measured.
type benchAccounts struct {
	bal  [256][256]testBalance
	fees [256]uint256.Int
}

func (a *benchAccounts) Available(token, owner Address) uint256.Int {
	var v uint256.Int
	b := &a.bal[token[0]][owner[0]]
	v.Sub(&b.cash, &b.locked)
	return v
}

func (a *benchAccounts) Lock(token, owner Address, amount *uint256.Int) {
	b := &a.bal[token[0]][owner[0]]
	b.locked.Add(&b.locked, amount)
}

func (a *benchAccounts) Unlock(token, owner Address, amount *uint256.Int) {
	b := &a.bal[token[0]][owner[0]]
	b.locked.Sub(&b.locked, amount)
	b.payDebt()
}

func (a *benchAccounts) SpendLocked(token, owner Address, amount *uint256.Int) {
	b := &a.bal[token[0]][owner[0]]
	b.locked.Sub(&b.locked, amount)
	b.cash.Sub(&b.cash, amount)
}

func (a *benchAccounts) Credit(token, owner Address, amount *uint256.Int) {
	b := &a.bal[token[0]][owner[0]]
	b.cash.Add(&b.cash, amount)
	b.payDebt()
}

func (a *benchAccounts) Debit(token, owner Address, amount *uint256.Int) {
	a.bal[token[0]][owner[0]].debit(amount)
}

func (a *benchAccounts) Holding(token, owner Address) (cash, locked, debt uint256.Int) {
	b := &a.bal[token[0]][owner[0]]
	return b.cash, b.locked, b.debt
}

func (a *benchAccounts) CollectFee(token Address, amount *uint256.Int) {
	a.fees[token[0]].Add(&a.fees[token[0]], amount)
}
