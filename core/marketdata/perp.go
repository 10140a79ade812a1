package marketdata

import (
	"bytes"

	"github.com/ledgervenue/node/core/clob"
)

// The perpetual markets' reads (docs/perps.md): the perp fields of
// ob_getMarkets and ob_getOrderbook, perp positions and the margin totals of
// ob_getPositions, ob_getTriggers, ob_getOraclePrices, ob_getFundingRates
// and ob_getRankedPositions. Positions, margins and triggers the index
// takes from the caller or reads from the engine (Live), as of the same
// applied input as the rest of the answer. The perp markets' own state
// (mark, oracle, funding, open interest, leverage) it keeps a copy of,
// which SyncPerp refreshes after every input that moves it (a tick, an
// oracle setting, a market's creation, a load): ob_getMarkets,
// ob_getOraclePrices and ob_getFundingRates answer from the index alone.

// Bounds of the perp reads.
const (
	// TriggersLimitMax bounds one ob_getTriggers page (the openapi's clamp
	// to [1, 200]); it is also the default.
	TriggersLimitMax = 200
	// RankedLimitMax bounds one ob_getRankedPositions page: each entry is a
	// whole positions object (up to one position per market). Larger limits
	// are clamped; RankedLimitDefault is used when none is given.
	RankedLimitMax     = 100
	RankedLimitDefault = 20
)

// SyncPerp copies every perp market's live state and maximum leverage
// from the engine (Live), for the reads (perpOf). The node calls it after
// each input that changes them: ticks (marks, funding, open interest),
// oracle settings, market creations, and once a load is done.
func (x *Index) SyncPerp() {
	for _, id := range x.bookIDs {
		b := x.books[id]
		b.hasPerp = false
		if b.cfg.Kind != clob.Perp || x.live == nil {
			continue
		}
		cfg, ok := x.live.Market(id)
		if !ok {
			continue
		}
		if b.perp, ok = x.live.PerpMarket(id); ok {
			b.perpLeverage, b.hasPerp = cfg.Perp.MaxLeverage, true
		}
	}
}

// perpOf returns a perp market's state and maximum leverage as of the last
// SyncPerp; ok is false for a spot market or without the engine.
func (x *Index) perpOf(b *book) (info clob.PerpInfo, leverage uint32, ok bool) {
	return b.perp, b.perpLeverage, b.hasPerp
}

// PerpMarkets appends the live state of every perp market, ascending by id
// (the answer of ob_getOraclePrices and ob_getFundingRates without an id).
func (x *Index) PerpMarkets(dst []clob.PerpInfo) []clob.PerpInfo {
	for _, id := range x.bookIDs {
		if info, _, ok := x.perpOf(x.books[id]); ok {
			dst = append(dst, info)
		}
	}
	return dst
}

// PerpMarket returns one market's live perp state; known is false for an
// unknown market, ok false for a spot one.
func (x *Index) PerpMarket(id clob.Hash) (info clob.PerpInfo, known, ok bool) {
	b, known := x.books[id]
	if !known {
		return info, false, false
	}
	info, _, ok = x.perpOf(b)
	return info, true, ok
}

// PerpPosition is one open perp position with its market's symbols.
type PerpPosition struct {
	clob.PositionInfo
	BaseSymbol, QuoteSymbol string
}

// PerpPositions appends the positions ps (one owner's, as the ledger
// reads them) with their markets' symbols.
func (x *Index) PerpPositions(dst []PerpPosition, ps []clob.PositionInfo) []PerpPosition {
	for _, p := range ps {
		pp := PerpPosition{PositionInfo: p}
		if b, ok := x.books[p.Book]; ok {
			pp.BaseSymbol, pp.QuoteSymbol = b.cfg.BaseSymbol, b.cfg.QuoteSymbol
		}
		dst = append(dst, pp)
	}
	return dst
}

// PositionsData is one account's ob_getPositions answer: its spot holdings,
// its open perp positions and, when the caller read the ledger for it
// (HasMargin), its cross-margin summary, which fills the account totals.
type PositionsData struct {
	Spot      []Position
	Perps     []PerpPosition
	Margin    clob.MarginInfo
	HasMargin bool
}

// TriggersQuery is the decoded ob_getTriggers query.
type TriggersQuery struct {
	Book      clob.Hash
	HasBook   bool
	Limit     int // 1..TriggersLimitMax
	Cursor    TriggerCursor
	HasCursor bool // page strictly after Cursor
}

// TriggerCursor names a trigger in (orderbook id, trigger id) order; its
// wire text is "{orderbook_id}:{order_id}", both 0x and 64 hex digits.
type TriggerCursor struct{ Book, ID clob.Hash }

// TriggersPage is one ob_getTriggers answer; Triggers is the dst slice
// PageTriggers was given, the page appended.
type TriggersPage struct {
	Triggers []Trigger
	Total    int // triggers matching the book filter, before pagination
	Next     TriggerCursor
	HasNext  bool
}

// PageTriggers cuts one page out of an owner's triggers, sorted by (book,
// id) as clob.Engine.AppendTriggers returns them, appending it to dst.
func PageTriggers(dst, all []Trigger, q *TriggersQuery) TriggersPage {
	p := TriggersPage{Triggers: dst}
	for i := range all {
		t := &all[i].Info
		if q.HasBook && t.Book != q.Book {
			continue
		}
		p.Total++
		switch {
		case q.HasCursor && compareTrigger(t, &q.Cursor) <= 0:
		case len(p.Triggers)-len(dst) == q.Limit:
			p.HasNext = true
		default:
			p.Triggers = append(p.Triggers, all[i])
		}
	}
	if p.HasNext {
		last := &p.Triggers[len(p.Triggers)-1].Info
		p.Next = TriggerCursor{Book: last.Book, ID: last.ID}
	}
	return p
}

func compareTrigger(t *clob.TriggerInfo, c *TriggerCursor) int {
	if d := bytes.Compare(t.Book[:], c.Book[:]); d != 0 {
		return d
	}
	return bytes.Compare(t.ID[:], c.ID[:])
}

// RankedQuery is the decoded ob_getRankedPositions parameters [limit?,
// offset?, address?].
type RankedQuery struct {
	Limit      int // 1..RankedLimitMax
	Offset     int
	Account    clob.Address
	HasAccount bool
}

// RankedAccount is one entry of ob_getRankedPositions.
type RankedAccount struct {
	Account   clob.Address
	Rank      int // zero-based, in the whole ordering
	Positions PositionsData
}

// RankedPage is one ob_getRankedPositions answer.
type RankedPage struct {
	Ranked     []RankedAccount
	Total      int
	Queried    RankedAccount
	HasQueried bool
}
