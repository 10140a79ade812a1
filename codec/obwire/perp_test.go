package obwire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/valyala/fastjson"
)

// perpLive is an engine with one perp market, bookP, and alice's position
// on it.
type perpLive struct {
	cfg       clob.MarketConfig
	info      clob.PerpInfo
	positions []clob.PositionInfo
}

func (l *perpLive) Order(clob.Hash) (clob.OrderInfo, bool) { return clob.OrderInfo{}, false }
func (l *perpLive) Market(id clob.Hash) (*clob.MarketConfig, bool) {
	return &l.cfg, id == l.cfg.ID
}
func (l *perpLive) PerpMarket(id clob.Hash) (clob.PerpInfo, bool) { return l.info, id == l.info.Book }
func (l *perpLive) AppendPositions(dst []clob.PositionInfo, owner clob.Address) []clob.PositionInfo {
	for _, p := range l.positions {
		if p.Owner == owner {
			dst = append(dst, p)
		}
	}
	return dst
}

var bookP = hashOf(3)

func marketP() *clob.MarketConfig {
	c := marketA()
	c.ID, c.Name, c.BaseSymbol, c.Kind, c.Base = bookP, "ETH-PERP", "ETH", clob.Perp, addrOf(0x44)
	c.Perp = clob.PerpParams{MaxLeverage: 20, OraclePrice: dec("3000" + e18[1:])}
	return c
}

func neg(s string) clob.Signed { return clob.Signed{Neg: true, Abs: dec(s)} }
func pos(s string) clob.Signed { return clob.Signed{Abs: dec(s)} }

func newPerpIndex() (*marketdata.Index, *perpLive) {
	live := &perpLive{cfg: *marketP(), info: clob.PerpInfo{
		Book: bookP, Oracle: dec("3000" + e18[1:]), Mark: dec("3001" + e18[1:]), FundingRate: neg("25"),
		FundingIndex: pos("7"), FundingLastUs: 1_500_000, OpenInterest: dec("6002" + e18[1:]),
	}}
	live.positions = []clob.PositionInfo{{
		Book: bookP, Owner: alice, Size: neg("2" + e18[1:]), Cost: neg("6000" + e18[1:]), EntryPrice: dec("3000" + e18[1:]),
		Mark: dec("3001" + e18[1:]), Notional: dec("6002" + e18[1:]), Unrealized: neg("2" + e18[1:]),
		Realized: pos("5"), Funding: neg("3"), InitialMargin: dec("300100000000000000000"),
		Maintenance: dec("150050000000000000000"), Liquidation: dec("4000" + e18[1:]), EntryFundingIx: pos("1"),
	}}
	x := marketdata.New(live)
	x.AddMarket(marketA())
	cfg := *marketP()
	cfg.Perp = clob.PerpParams{} // as after a snapshot load: the engine's copy counts
	x.AddMarket(&cfg)
	x.SyncPerp() // as the node does after each input that moves a perp market
	return x, live
}

func TestPerpMarketFields(t *testing.T) {
	x, _ := newPerpIndex()
	ms := x.Markets(nil)
	var got []map[string]any
	if err := json.Unmarshal(AppendMarkets(nil, ms), &got); err != nil {
		t.Fatal(err)
	}
	spot, perp := got[0], got[1]
	for k, want := range map[string]any{"market_type": "spot", "max_leverage": 1.0, "oracle_price": nil, "mark_price": nil,
		"funding_rate": nil, "funding_index": nil, "funding_last_updated": nil, "open_interest": nil} {
		if spot[k] != want {
			t.Fatalf("spot %s = %v, want %v", k, spot[k], want)
		}
	}
	for k, want := range map[string]any{"market_type": "perpetual", "max_leverage": 20.0, "oracle_price": "0xa2a15d09519be00000",
		"mark_price": "0xa2af3dc00543440000", "funding_rate": "-25", "funding_index": "7", "funding_last_updated": 1_500_000.0,
		"open_interest": "0x1455e7b800a86880000"} {
		if perp[k] != want {
			t.Fatalf("perp %s = %v, want %v", k, perp[k], want)
		}
	}
	snap, ok := x.Orderbook(bookP, nil, nil, 0)
	if !ok {
		t.Fatal("no perp orderbook")
	}
	if s := string(AppendOrderbook(nil, &snap)); !strings.HasSuffix(s, `"sells_count":0,"oracle_price":"0xa2a15d09519be00000",`+
		`"funding_rate":"-25","funding_index":"7","funding_last_updated":1500000}`) {
		t.Fatalf("perp orderbook: %s", s)
	}
	snap, _ = x.Orderbook(bookA, nil, nil, 0)
	if s := string(AppendOrderbook(nil, &snap)); !strings.HasSuffix(s, `"oracle_price":null,"funding_rate":null,"funding_index":null,"funding_last_updated":null}`) {
		t.Fatalf("spot orderbook: %s", s)
	}
	if got := string(AppendOraclePrices(nil, x.PerpMarkets(nil))); got != `[{"orderbook_id":"`+idP+`","oracle_price":"0xa2a15d09519be00000",`+
		`"mark_price":"0xa2af3dc00543440000","as_of":1500000}]` {
		t.Fatalf("oracle prices: %s", got)
	}
	if got := string(AppendFundingRates(nil, x.PerpMarkets(nil))); got != `[{"orderbook_id":"`+idP+`","funding_rate":"-25","funding_index":"7",`+
		`"mark_price":"0xa2af3dc00543440000","oracle_price":"0xa2a15d09519be00000","as_of":1500000}]` {
		t.Fatalf("funding rates: %s", got)
	}
	if _, known, ok := x.PerpMarket(bookA); !known || ok {
		t.Fatal("a spot market is known and not perp")
	}
	if _, known, _ := x.PerpMarket(hashOf(9)); known {
		t.Fatal("an unknown market is known")
	}
}

const idP = "0x0000000000000000000000000000000000000000000000000000000000000003"

// TestPerpPositionsJSON: perp positions follow the spot holdings, and the
// margin summary fills the totals; account_value adds the spot holdings at
// their mark.
func TestPerpPositionsJSON(t *testing.T) {
	x, live := newPerpIndex()
	x.Tick(mkTick(500_000, bookTick{book: bookA, price: "5" + e18[1:], volume: e18}))
	balances := func(token, owner clob.Address) (cash, locked uint256.Int) {
		if owner == alice && token == baseA {
			return dec("3" + e18[1:]), dec("0")
		}
		return
	}
	d := marketdata.PositionsData{Spot: x.Positions(nil, alice, balances), Perps: x.PerpPositions(nil, live.AppendPositions(nil, alice)), HasMargin: true,
		Margin: clob.MarginInfo{Owner: alice, Cash: neg("1" + e18[1:]), Equity: neg("3" + e18[1:]), Unrealized: neg("2" + e18[1:]),
			Realized: pos("5"), Withdrawable: dec("0")}}
	got := string(AppendPositions(nil, &d))
	want := `{"positions":[{"kind":"spot","orderbook_id":"` + idA + `","base_symbol":"WETH","quote_symbol":"USD",` +
		`"balance":"0x29a2241af62c0000","free_balance":"0x29a2241af62c0000","locked_balance":"0x0",` +
		`"cost_basis":null,"mark_price":"0x4563918244f40000","unrealized_pnl":null,"realized_pnl":null},` +
		`{"kind":"perp","orderbook_id":"` + idP + `","base_symbol":"ETH","quote_symbol":"USD","side":"short",` +
		`"size":"-2000000000000000000","notional":"0x1455e7b800a86880000","entry_price":"0xa2a15d09519be00000",` +
		`"mark_price":"0xa2af3dc00543440000","margin":"0x1044b9600086ba0000","leverage":"0x1158e460913d00000",` +
		`"funding_accrued":"-3","entry_funding":"1","liquidation_price":"0xd8d726b7177a800000",` +
		`"unrealized_pnl":"-2000000000000000000","realized_pnl":"5","stop_loss":null,"take_profit":null}],` +
		`"total_unrealized_pnl":"-2000000000000000000","total_realized_pnl":"5","perps_equity":"-3000000000000000000",` +
		`"account_value":"12000000000000000000","cash":"-1000000000000000000","withdrawable_cash":"0x0","net_deposits":null}`
	if got != want {
		t.Fatalf("positions:\ngot  %s\nwant %s", got, want)
	}
	// Perp positions alone, no margin summary: no leading comma, null totals.
	d = marketdata.PositionsData{Perps: x.PerpPositions(nil, live.AppendPositions(nil, alice))}
	if got := string(AppendPositions(nil, &d)); !strings.HasPrefix(got, `{"positions":[{"kind":"perp"`) ||
		!strings.Contains(got, `],"total_unrealized_pnl":null,`) {
		t.Fatalf("perp only: %s", got)
	}
	if !json.Valid([]byte(got)) {
		t.Fatalf("invalid JSON: %s", got)
	}
}

func TestAddUnsigned(t *testing.T) {
	for _, c := range []struct {
		s    clob.Signed
		v    string
		want clob.Signed
	}{{neg("5"), "3", neg("2")}, {neg("5"), "5", pos("0")}, {neg("5"), "7", pos("2")}, {pos("5"), "7", pos("12")}} {
		got := c.s
		v := dec(c.v)
		addUnsigned(&got, &v)
		if got != c.want {
			t.Fatalf("%+v + %s = %+v, want %+v", c.s, c.v, got, c.want)
		}
	}
	max := clob.Signed{}
	max.Abs.SetAllOne()
	one := dec("1")
	if addUnsigned(&max, &one); !max.Abs.Eq(new(uint256.Int).SetAllOne()) {
		t.Fatal("no saturation")
	}
}

func trigger(book clob.Hash, id byte) marketdata.Trigger {
	return marketdata.Trigger{TxHash: hashOf(id + 100), HasTx: id != 1, Info: clob.TriggerInfo{ID: hashOf(id), Book: book, Owner: alice, Nonce: uint64(id), Side: clob.Sell, Size: dec(e18),
		LimitPrice: dec("0"), TriggerPrice: dec("2900" + e18[1:]), TriggerType: clob.TriggerStopLoss, Grouping: clob.GroupingAsset,
		Flags: clob.FlagReduceOnly, DeadlineUs: 1_000_000}}
}

// TestPageTriggers: pages of a filter neither skip nor repeat, the total
// counts the filter before pagination, and the cursor round-trips.
func TestPageTriggers(t *testing.T) {
	var all []marketdata.Trigger
	for i := byte(1); i <= 5; i++ {
		all = append(all, trigger(bookA, i))
	}
	for i := byte(6); i <= 9; i++ {
		all = append(all, trigger(bookP, i))
	}
	for _, c := range []struct {
		query string
		want  []byte
		total int
	}{{`{"limit":2}`, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, 9}, {`{"limit":4,"orderbook_id":"` + idP + `"}`, []byte{6, 7, 8, 9}, 4},
		{`{"limit":1,"orderbook_id":"` + idA + `"}`, []byte{1, 2, 3, 4, 5}, 5}, {`{}`, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, 9}} {
		q, err := ParseTriggersQuery(fastjson.MustParse(c.query))
		if err != nil {
			t.Fatal(err)
		}
		var seen []byte
		for pages := 0; ; pages++ {
			p := marketdata.PageTriggers(nil, all, &q)
			if p.Total != c.total || len(p.Triggers) > q.Limit || pages > 20 {
				t.Fatalf("%s: total %d, page of %d", c.query, p.Total, len(p.Triggers))
			}
			for _, tr := range p.Triggers {
				seen = append(seen, tr.Info.ID[31])
			}
			js := string(AppendTriggers(nil, &p))
			if !json.Valid([]byte(js)) {
				t.Fatalf("invalid JSON: %s", js)
			}
			if !p.HasNext {
				if !strings.HasSuffix(js, `"next_cursor":null}`) {
					t.Fatalf("last page: %s", js)
				}
				break
			}
			cur := string(AppendTriggerCursor(nil, &p.Next))
			if !strings.HasSuffix(js, `"next_cursor":"`+cur+`"}`) {
				t.Fatalf("cursor %s not in %s", cur, js)
			}
			v := fastjson.MustParse(c.query)
			v.Set("cursor", fastjson.MustParse(`"`+cur+`"`))
			if q, err = ParseTriggersQuery(v); err != nil || q.Cursor != p.Next {
				t.Fatalf("cursor %s: %v", cur, err)
			}
		}
		if string(seen) != string(c.want) {
			t.Fatalf("%s: saw %v, want %v", c.query, seen, c.want)
		}
	}
	p := marketdata.PageTriggers(nil, all[:1], &marketdata.TriggersQuery{Limit: 1})
	got := string(AppendTriggers(nil, &p))
	want := `{"triggers":[{"orderbook_id":"` + idA + `","order_id":"` + idA + `","tx_hash":null` +
		`,"bidder":"0x00000000000000000000000000000000000000a1","nonce":1,"size":"-1000000000000000000","limit_price":"0x0",` +
		`"trigger_price":"0x9d3595ab2438d00000","trigger_type":"stop_loss","grouping":"asset","reduce_only":true,"ioc":false,` +
		`"deadline":1000000,"end":null}],"total_count":1,"next_cursor":null}`
	if got != want {
		t.Fatalf("trigger:\ngot  %s\nwant %s", got, want)
	}
}

func TestParsePerpQueries(t *testing.T) {
	for _, c := range []struct{ query, field string }{
		{`[]`, "triggers query"}, {`{"orderbook_id":"0x12"}`, "orderbook_id"}, {`{"limit":0}`, "limit"},
		{`{"limit":"x"}`, "limit"}, {`{"cursor":"abc"}`, "cursor"}, {`{"cursor":"` + idA + `"}`, "cursor"},
		{`{"cursor":"` + idA + `:0x12"}`, "cursor"}, {`{"cursor":7}`, "cursor"},
	} {
		_, err := ParseTriggersQuery(fastjson.MustParse(c.query))
		if err == nil || !strings.HasPrefix(string(err.Data), `"`+c.field+":") {
			t.Fatalf("%s: %v, want an error naming %s", c.query, err, c.field)
		}
	}
	q, err := ParseTriggersQuery(fastjson.MustParse(`{"limit":100000,"orderbook_id":null}`))
	if err != nil || q.Limit != marketdata.TriggersLimitMax || q.HasBook {
		t.Fatalf("clamp: %+v %v", q, err)
	}
	if q, err := ParseTriggersQuery(nil); err != nil || q.Limit != marketdata.TriggersLimitMax {
		t.Fatalf("absent query: %+v %v", q, err)
	}

	p := func(s string) *fastjson.Value {
		if s == "" {
			return nil
		}
		return fastjson.MustParse(s)
	}
	for _, c := range []struct{ limit, offset, addr, field string }{
		{"0", "", "", "limit"}, {`"x"`, "", "", "limit"}, {"", "-1", "", "offset"}, {"", "1.5", "", "offset"},
		{"", "", `"0x12"`, "address"}, {"", "", "7", "address"},
	} {
		_, err := ParseRankedQuery(p(c.limit), p(c.offset), p(c.addr))
		if err == nil || !strings.HasPrefix(string(err.Data), `"`+c.field+":") {
			t.Fatalf("%+v: %v, want an error naming %s", c, err, c.field)
		}
	}
	q2, err := ParseRankedQuery(p("1000"), p("null"), p(`"0x00000000000000000000000000000000000000a1"`))
	if err != nil || q2.Limit != marketdata.RankedLimitMax || q2.Offset != 0 || !q2.HasAccount || q2.Account != alice {
		t.Fatalf("ranked: %+v %v", q2, err)
	}
	if q2, err = ParseRankedQuery(nil, nil, nil); err != nil || q2.Limit != marketdata.RankedLimitDefault || q2.HasAccount {
		t.Fatalf("ranked defaults: %+v %v", q2, err)
	}
}

func TestAppendRanked(t *testing.T) {
	page := marketdata.RankedPage{Total: 3, Ranked: []marketdata.RankedAccount{{Account: bob, Rank: 1}}, HasQueried: true,
		Queried: marketdata.RankedAccount{Account: alice, Rank: 2}}
	got := string(AppendRanked(nil, &page))
	empty := `{"positions":[],"total_unrealized_pnl":null,"total_realized_pnl":null,"perps_equity":null,"account_value":null,` +
		`"cash":null,"withdrawable_cash":null,"net_deposits":null}`
	want := `{"ranked":[{"account":"0x00000000000000000000000000000000000000b0","positions":` + empty + `}],"total":3,` +
		`"queried":{"account":"0x00000000000000000000000000000000000000a1","rank":2,"positions":` + empty + `}}`
	if got != want {
		t.Fatalf("ranked:\ngot  %s\nwant %s", got, want)
	}
	if got := string(AppendRanked(nil, &marketdata.RankedPage{})); got != `{"ranked":[],"total":0,"queried":null}` {
		t.Fatalf("empty ranked: %s", got)
	}
}
