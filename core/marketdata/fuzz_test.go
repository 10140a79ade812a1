package marketdata

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/valyala/fastjson"
)

// FuzzParams feeds arbitrary JSON to every query decoder. They must never
// panic, must answer only -32602, and what they accept must be in range.
// The input arrives in two halves, joined, as the codec fuzz targets do.
func FuzzParams(f *testing.F) {
	for _, seed := range []string{
		`{"orderbook_id":"` + idA + `","limit":10,"status":"active","with_total":true}`,
		`{"cursor":"1704153600000000:42:abcdef1234567890abcdef1234567890abcdef1234567890abcdef1234567890"}`,
		`{"resolution":"1h","from_ts":1704067200000000,"to_ts":1704153600000000,"limit":100}`,
		`{"resolution":"1d","from_ts":"0x10","to_ts":null}`,
		`20`, `"0x14"`, `null`, `[]`, `{"limit":-1}`, `{"cursor":"1:2:3"}`,
		`{"clob_ids":["` + idB + `","` + idA + `"],"limit":2}`, `{"orderbook_ids":[],"status":"filled"}`,
		`{"limit":1,"limit":2,"unknown":3}`,
		`[1704067200000000,1704153600000000,"1h"]`, `["0x10",null,3600]`, `[{"resolution":"1m","from_ts":0},null]`,
	} {
		f.Add(seed[:len(seed)/2], seed[len(seed)/2:])
	}
	f.Fuzz(func(t *testing.T, head, tail string) {
		var p fastjson.Parser
		v, err := p.Parse(head + tail)
		if err != nil {
			return
		}
		check := func(e *jsonrpc.Error) {
			if e != nil && e.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("error code %d", e.Code)
			}
		}
		depth, e := ParseDepth(v)
		check(e)
		if e == nil && depth < 0 {
			t.Fatalf("depth %d", depth)
		}
		oq, e := ParseOrdersQuery(v)
		check(e)
		if e == nil && (oq.Limit < 1 || oq.Limit > OrdersLimitMax || oq.Cursor.TsUs < 0) {
			t.Fatalf("orders query out of range: %+v", oq)
		}
		if e == nil && (len(oq.Books) > OrdersBooksMax || oq.HasBook && len(oq.Books) > 0 ||
			!slices.IsSortedFunc(oq.Books, compareHash) || len(slices.Compact(slices.Clone(oq.Books))) != len(oq.Books)) {
			t.Fatalf("orders query books out of range: %+v", oq)
		}
		if e == nil && oq.HasCursor {
			text := AppendCursor(nil, &oq.Cursor)
			if c, ok := ParseCursor(text); !ok || c != oq.Cursor {
				t.Fatalf("cursor %q does not round-trip", text)
			}
		}
		cq, e := ParseCandlesQuery(v)
		check(e)
		if e == nil && (cq.Limit < 1 || cq.Limit > CandlesLimitMax || cq.FromUs < 0 || cq.ToUs < cq.FromUs || cq.Resolution >= resolutionCount) {
			t.Fatalf("candles query out of range: %+v", cq)
		}
		if v.Type() == fastjson.TypeArray {
			cq, e := ParseCandlesParams(v.GetArray())
			check(e)
			if e == nil && (cq.Limit < 1 || cq.Limit > CandlesLimitMax || cq.FromUs < 0 || cq.ToUs < cq.FromUs || cq.Resolution >= resolutionCount) {
				t.Fatalf("candles params out of range: %+v", cq)
			}
		}
		for _, parse := range []func(*fastjson.Value) *jsonrpc.Error{
			func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseTriggersQuery(v); return e },
			func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseFillsQuery(v); return e },
			func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseBackstopQuery(v); return e },
		} {
			check(parse(v))
		}
		_, e = ParseOrderbookID(v)
		check(e)
		ParseCursor([]byte(head + tail))
	})
}

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
	out = AppendMarkets(out, x.Markets(nil))
	balances := func(token, owner clob.Address) (cash, locked uint256.Int) {
		return *uint256.NewInt(uint64(token[0])), *uint256.NewInt(uint64(owner[0]))
	}
	for _, id := range x.bookIDs {
		s, _ := x.Orderbook(id, nil, nil, 1)
		out = AppendOrderbook(out, &s)
		for r := range resolutionCount {
			cs, _ := x.Candles(nil, id, &CandlesQuery{Resolution: r, ToUs: math.MaxInt64})
			out = AppendCandles(out, cs)
		}
	}
	for owner := range x.accounts {
		page := x.Orders(nil, owner, &OrdersQuery{Limit: OrdersLimitMax, WithTotal: true, WithFills: true})
		out = AppendOrders(out, &page)
		out = AppendPositions(out, &PositionsData{Spot: x.Positions(nil, owner, balances)})
	}
	for owner := range x.fills {
		page := x.Fills(owner, &FillsQuery{ToUs: math.MaxInt64, Limit: FillsLimitMax})
		out = x.AppendFills(out, &page)
	}
	bs := x.BackstopTransfers(&BackstopQuery{Limit: BackstopLimitMax})
	_ = AppendBackstopTransfers(out, &bs)
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
