package subs

import (
	"slices"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

// tickRec is one published tick in the replay ring. Its inputs are
// immutable once published; its memos (the encoded payloads) are filled
// lazily by the fan-out and by replays, under Hub.mu, and never change once
// set: every subscriber given a payload gets the same bytes.
type tickRec struct {
	seq       uint64
	t         *tickrec.Tick
	books     []bookRec // one per t.Result.Books entry, ascending id
	markets   []marketEnt
	positions []posEnt
	triggers  []trigEnt

	// Memos, guarded by Hub.mu.
	head        []byte
	headDone    bool
	transfers   map[string][]byte // by account filter key
	withdrawals map[string][]byte
	xferOwners  []clob.Address // distinct from/to of transfers, sorted
	xferDone    bool
}

// bookRec is one book that ran in a tick.
type bookRec struct {
	id     clob.Hash
	bt     *clob.BookTick
	upd    *tickrec.BookUpdate
	events []clob.Event

	// Memos, guarded by Hub.mu.
	owners     []clob.Address // distinct owners of the book's order events, sorted
	ownersDone bool
	orderbook  []depthMemo
	candle     []byte
	v1, v2     map[string][]byte // by account filter key; empty = nothing
	created    map[clob.Hash]int32
	candleDone bool
}

type depthMemo struct {
	depth int
	data  []byte
}

// marketEnt and posEnt are state entries: the latest ones are kept by the
// hub as the snapshot source of svc_markets and svc_positions.
type marketEnt struct {
	m   *marketdata.Market
	enc []byte
}

type posEnt struct {
	p   *tickrec.AccountPositions
	enc []byte
}

type trigEnt struct {
	p   *tickrec.AccountTriggers
	enc []byte
}

func newTickRec(seq uint64, t *tickrec.Tick) *tickRec {
	if len(t.Books) != len(t.Result.Books) {
		panic("BUG: tickrec.Tick.Books must have one entry per Result.Books entry")
	}
	r := &tickRec{seq: seq, t: t, books: make([]bookRec, len(t.Books))}
	for i := range t.Books {
		bt := &t.Result.Books[i]
		r.books[i] = bookRec{id: bt.Book, bt: bt, upd: &t.Books[i], events: t.Result.Events[bt.FirstEvent:bt.EndEvent]}
	}
	r.markets = make([]marketEnt, len(t.Markets))
	for i := range t.Markets {
		r.markets[i].m = &t.Markets[i]
	}
	r.positions = make([]posEnt, len(t.Positions))
	for i := range t.Positions {
		r.positions[i].p = &t.Positions[i]
	}
	r.triggers = make([]trigEnt, len(t.Triggers))
	for i := range t.Triggers {
		r.triggers[i].p = &t.Triggers[i]
	}
	return r
}

// ownerList returns the distinct owners of the book's order events.
func (b *bookRec) ownerList() []clob.Address {
	if !b.ownersDone {
		b.ownersDone = true
		for i := range b.events {
			if b.events[i].Kind != clob.EventTransfer {
				b.owners = append(b.owners, b.events[i].Owner)
			}
		}
		slices.SortFunc(b.owners, compareAddress)
		b.owners = slices.Compact(b.owners)
	}
	return b.owners
}

// transferOwners returns the distinct from/to accounts of the tick's transfers.
func (r *tickRec) transferOwners() []clob.Address {
	if !r.xferDone {
		r.xferDone = true
		for i := range r.t.Result.Events {
			e := &r.t.Result.Events[i]
			if e.Kind == clob.EventTransfer {
				r.xferOwners = append(r.xferOwners, e.Owner, e.To)
			}
		}
		slices.SortFunc(r.xferOwners, compareAddress)
		r.xferOwners = slices.Compact(r.xferOwners)
	}
	return r.xferOwners
}
