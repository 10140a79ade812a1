package marketdata

import (
	"bytes"
	"math"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// FuzzLoad feeds arbitrary bytes to Load, seeded with real snapshots. Load
// must never panic; what it accepts must re-encode to the same bytes, hold
// the index's invariants, answer queries and take further inputs. The
// input arrives in two halves, joined, as the codec fuzz targets do.
func FuzzLoad(f *testing.F) {
	for _, x := range snapshotStates() {
		if snap := x.AppendSnapshot(nil); len(snap) <= 32<<10 {
			f.Add(snap[:len(snap)/2], snap[len(snap)/2:])
		}
	}
	f.Fuzz(func(t *testing.T, head, tail []byte) {
		snap := append(head[:len(head):len(head)], tail...)
		x, err := Load(nil, snap)
		if err != nil {
			if x != nil {
				t.Fatalf("an index and an error")
			}
			return
		}
		if got := x.AppendSnapshot(nil); !bytes.Equal(got, snap) {
			t.Fatalf("accepted snapshot re-encodes differently: %d bytes, then %d", len(snap), len(got))
		}
		checkInvariants(t, x)
		askEverything(x)
		feedEverything(x)
		checkInvariants(t, x)
		askEverything(x)
	})
}

// askEverything runs one query of each kind on every book and account.
func askEverything(x *Index) {
	var out []byte
	out = appendDump(out, x.Markets(nil))
	balances := func(token, owner clob.Address) (cash, locked uint256.Int) {
		return *uint256.NewInt(uint64(token[0])), *uint256.NewInt(uint64(owner[0]))
	}
	for _, id := range x.bookIDs {
		s, _ := x.Orderbook(id, nil, nil, 1)
		out = appendDump(out, &s)
		for r := range resolutionCount {
			cs, _ := x.Candles(nil, id, &CandlesQuery{Resolution: r, ToUs: math.MaxInt64})
			out = appendDump(out, cs)
		}
	}
	for owner := range x.accounts {
		page := x.Orders(nil, owner, &OrdersQuery{Limit: OrdersLimitMax, WithTotal: true, WithFills: true})
		out = appendDump(out, &page)
		out = appendDump(out, &PositionsData{Spot: x.Positions(nil, owner, balances)})
	}
	for owner := range x.fills {
		page := x.Fills(owner, &FillsQuery{ToUs: math.MaxInt64, Limit: FillsLimitMax})
		out = appendDump(out, &page)
	}
	bs := x.BackstopTransfers(&BackstopQuery{Limit: BackstopLimitMax})
	_ = appendDump(out, &bs)
}

// feedEverything admits an order to every book and runs a tick, at the
// index's now, that trades in every book and moves every order: the new
// ones placed, each account's first cancelled, the others filled (every
// other fill terminal).
func feedEverything(x *Index) {
	res := &clob.TickResult{TickUs: x.nowUs}
	for i, id := range x.bookIDs {
		m := OrderMeta{Book: id, Owner: clob.Address{0xfe}, AdmittedUs: x.nowUs}
		m.ID = id
		m.ID[0] ^= 0xff // likely not an id the index knows; ignored if it is
		x.Admitted(&m)
		bt := clob.BookTick{Book: id, Price: *uint256.NewInt(7), HasPrice: true, Traded: true,
			VolumeBase: *uint256.NewInt(1), FirstEvent: len(res.Events)}
		res.Events = append(res.Events, clob.Event{Kind: clob.EventPlaced, OrderID: m.ID})
		if i == 0 { // the index files each event under its order's own book
			for _, a := range x.accounts {
				for j, o := range a.orders {
					e := clob.Event{Kind: clob.EventFill, OrderID: o.Meta.ID, Base: *uint256.NewInt(1), Terminal: j%2 == 0}
					if j == 0 {
						e.Kind = clob.EventCancel
					}
					res.Events = append(res.Events, e)
				}
			}
		}
		bt.EndEvent = len(res.Events)
		res.Books = append(res.Books, bt)
	}
	x.Tick(res)
}
