//go:build unix

package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
)

// End-to-end tests of the strategy report (lab_strategyReport, docs/lab.md
// "The strategy report"), against numbers derived by hand.

type reportPnL struct {
	Total     string `json:"total"`
	Spread    string `json:"spread_capture"`
	Fees      string `json:"fees"`
	Funding   string `json:"funding"`
	Inventory string `json:"inventory"`
}

type reportMarkout struct {
	HorizonMs int64   `json:"horizon_ms"`
	Fills     int     `json:"fills"`
	Pending   int     `json:"pending"`
	PnL       string  `json:"pnl"`
	AvgBps    float64 `json:"avg_bps"`
}

type reportMarket struct {
	Market     string                     `json:"market"`
	Book       common.Hash                `json:"orderbook_id"`
	Kind       string                     `json:"kind"`
	Quote      string                     `json:"quote"`
	InTotals   bool                       `json:"in_totals"`
	PnL        reportPnL                  `json:"pnl"`
	Fills      int                        `json:"fills"`
	Maker      int                        `json:"maker_fills"`
	Taker      int                        `json:"taker_fills"`
	Volume     string                     `json:"volume"`
	VolumeBase string                     `json:"volume_base"`
	FillRatio  float64                    `json:"fill_ratio"`
	Top        struct{ Bid, Ask float64 } `json:"top_of_book"`
	Markouts   []reportMarkout            `json:"markouts"`
	InvStart   string                     `json:"inventory_start"`
	InvEnd     string                     `json:"inventory_end"`
	RefStart   string                     `json:"reference_start"`
	RefEnd     string                     `json:"reference_end"`
}

type strategyReport struct {
	Account     common.Address  `json:"account"`
	From        int64           `json:"from"`
	To          int64           `json:"to"`
	Quote       string          `json:"quote"`
	Complete    bool            `json:"complete"`
	PnL         reportPnL       `json:"pnl"`
	Fills       int             `json:"fills"`
	Maker       int             `json:"maker_fills"`
	Taker       int             `json:"taker_fills"`
	Volume      string          `json:"volume"`
	FillRatio   float64         `json:"fill_ratio"`
	MaxDrawdown string          `json:"max_drawdown"`
	Markouts    []reportMarkout `json:"markouts"`
	Markets     []reportMarket  `json:"markets"`
	Series      []struct {
		T         int64             `json:"t"`
		PnL       string            `json:"pnl"`
		Inventory map[string]string `json:"inventory"`
	} `json:"series"`
}

// report calls lab_strategyReport on c and returns the answer decoded and
// raw.
func report(t *testing.T, c *gethrpc.Client, q map[string]any) (strategyReport, json.RawMessage) {
	t.Helper()
	var raw json.RawMessage
	if err := c.CallContext(context.Background(), &raw, "lab_strategyReport", q); err != nil {
		t.Fatalf("lab_strategyReport %v: %v (%v)", q, err, errorData(err))
	}
	var r strategyReport
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("lab_strategyReport: %v in %s", err, raw)
	}
	return r, raw
}

// fundedPerpMarket is perpMarket with funding at its cap, 100 % per 8 h
// (interest_rate = max_funding_rate = 1e18), so that one tick of 500 ms
// moves the funding index by a whole number of q per lot.
func fundedPerpMarket(name string) map[string]any {
	m := perpMarket(name)
	m["interest_rate"] = hexutil.EncodeBig(e18)
	m["max_funding_rate"] = hexutil.EncodeBig(e18)
	m["auction_interval"] = intervalUs
	return m
}

// TestStrategyReportHandComputed: dev account 0 (A) makes the WETH/USD
// market and trades a funded perp, three ticks t1 < t2 < t3 500 ms apart,
// then the clock moves 10 s:
//
//	t1  A rests a bid 1 @ 99 and an ask 1 @ 101 on WETH/USD (mid 100);
//	    A buys 1 perp from B @ 3000 (the oracle and mark: 3000). The
//	    long pays one funding move: f = trunc(1e18·2·300000·500000 /
//	    (1e18·28.8e9)) = 10 q per lot, × 1000 lots × q 5e12 wei (a lot
//	    of 0.001 at a half step of 0.005) = 0.05.
//	    admin_setOraclePrice 3010: the mark is 3010 from t2.
//	t2  B buys 1 WETH @ 101: A's ask fills (maker, fee 0.01 % = 0.0101);
//	    A sells 1 perp to C @ 3010 (flat: no funding after t1).
//	t3  C sells 1 WETH @ 99: A's bid fills (maker, fee 0.0099).
//
// WETH/USD (r before t2 = mid 100, before t3 = last clearing 101 with
// only a bid resting, r(to) = 99 with the book empty):
//
//	spread    = −1·(100 − 101) + 1·(101 − 99) = 3
//	inventory = −1·(99 − 100) + 1·(99 − 101) = −1     fees = −0.02
//	total     = 1.98 (= +101 − 99 − 0.02, the cash it moved)
//
// perp (r before t1 = 3000, before t2 = 3000, r(to) = 3010):
//
//	spread = 1·(3000 − 3000) − 1·(3000 − 3010) = 10
//	inventory = 1·(3010 − 3000) − 1·(3010 − 3000) = 0
//	funding = −0.05, fees 0, total = 9.95
//
// Totals 11.93 = 13 − 0.02 − 0.05 − 1. Markouts at 1 s and 10 s (r then
// is the one after t3 or later): WETH +2 (the sell: −1·(99 − 101)) on a
// notional of 200, 100 bps; perp +10 (the buy: 3010 − 3000) on 6010,
// 16.6389 bps; totals 12 on 6210, 19.3237 bps; at 60 s every fill is
// pending (to = t3 + 10 s). The series: −0.05 after t1 (the funding),
// 9.9399 after t2, 11.93 after t3; max drawdown 0.05. A's bid was at the
// top 1 s of the 11 s window, its ask 0.5 s. The change of A's value
// (native balance, nothing open at either end, WETH unchanged) plus the
// gas its transactions paid is the total.
func TestStrategyReportHandComputed(t *testing.T) {
	tn := startNodeWith(t, nodeSetup{rpc: devMode}) // lab_ needs no token under --dev
	ws := tn.dialWS(t)
	perp := tn.createMarket(t, fundedPerpMarket("F-PERP"))
	a, b, c := tn.sender(t, 0), tn.sender(t, 1), tn.sender(t, 2)
	tn.tick(t)
	tn.tick(t) // the perp market has ticked: its next tick's dt is 500 ms
	start := tn.balance(t, a.addr())
	wethStart := callView(t, tn, "balanceOf", weth, a.addr())
	gas := new(big.Int)
	send := func(s *obSender, data []byte) {
		r := s.mustSend(t, data)
		if s == a {
			gas.Add(gas, gasCost(r))
		}
	}

	send(a, tn.submit(t, wethBook, eth(1), eth(99), 0, 0, 0))
	send(a, tn.submit(t, wethBook, eth(-1), eth(101), 0, 0, 0))
	send(a, tn.submit(t, perp, eth(1), eth(3000), 0, 0, 0))
	send(b, tn.submit(t, perp, eth(-1), eth(3000), 0, 0, 0))
	tn.tick(t)
	t1 := tn.node.Clock().NowMicros()
	tn.setOracle(t, perp, eth(3010))
	send(b, tn.submit(t, wethBook, eth(1), eth(101), 0, 0, 0))
	send(a, tn.submit(t, perp, eth(-1), eth(3010), 0, 0, 0))
	send(c, tn.submit(t, perp, eth(1), eth(3010), 0, 0, 0))
	tn.tick(t)
	t2 := tn.node.Clock().NowMicros()
	send(c, tn.submit(t, wethBook, eth(-1), eth(99), 0, 0, 0))
	tn.tick(t)
	t3 := tn.node.Clock().NowMicros()
	if err := tn.admin.CallContext(context.Background(), nil, "admin_advanceTime", 10_000_000); err != nil {
		t.Fatal(err)
	}

	q := map[string]any{"account": a.addr(), "from": t1}
	r, raw := report(t, tn.rpc, q)
	if _, wsRaw := report(t, ws, q); string(wsRaw) != string(raw) {
		t.Fatalf("over WebSocket:\n%s\nover HTTP:\n%s", wsRaw, raw)
	}
	if t2 != t1+intervalUs || t3 != t2+intervalUs {
		t.Fatalf("ticks at %d %d %d, want 500 ms apart", t1, t2, t3)
	}
	// The value identity: A's native balance moved by the total less gas.
	moved := new(big.Int).Sub(tn.balance(t, a.addr()), start)
	if w := callView(t, tn, "balanceOf", weth, a.addr()); w.Cmp(wethStart) != 0 {
		t.Fatalf("WETH %v, was %v", w, wethStart)
	}
	if want := new(big.Int).Sub(quoteWei(t, r.PnL.Total), gas); moved.Cmp(want) != 0 {
		t.Fatalf("balance moved %v, want total − gas = %v", moved, want)
	}

	want := reportPnL{Total: "11.93", Spread: "13", Fees: "-0.02", Funding: "-0.05", Inventory: "-1"}
	if r.Account != a.addr() || r.From != t1 || r.To != t3+10_000_000 || r.Quote != "USD" || !r.Complete ||
		r.PnL != want || r.Fills != 4 || r.Maker != 2 || r.Taker != 2 || r.Volume != "6210" || r.FillRatio != 1 ||
		r.MaxDrawdown != "0.05" || len(r.Markets) != 2 {
		t.Fatalf("report %s", raw)
	}
	wantMarkouts := func(name string, got []reportMarkout, fills int, pnl string, bps float64) {
		t.Helper()
		w := []reportMarkout{{1000, fills, 0, pnl, bps}, {10000, fills, 0, pnl, bps}, {60000, 0, fills, "0", 0}}
		if len(got) != 3 || got[0] != w[0] || got[1] != w[1] || got[2] != w[2] {
			t.Fatalf("%s markouts %+v, want %+v", name, got, w)
		}
	}
	wantMarkouts("total", r.Markouts, 4, "12", 19.3237)
	spot, pm := r.Markets[0], r.Markets[1]
	if spot.Book != wethBook || spot.Market != "WETH/USD" || spot.Kind != "spot" || spot.Quote != "USD" || !spot.InTotals ||
		spot.PnL != (reportPnL{Total: "1.98", Spread: "3", Fees: "-0.02", Funding: "0", Inventory: "-1"}) ||
		spot.Fills != 2 || spot.Maker != 2 || spot.Taker != 0 || spot.Volume != "200" || spot.VolumeBase != "2" ||
		spot.FillRatio != 1 || spot.Top.Bid != 0.090909 || spot.Top.Ask != 0.045455 ||
		spot.InvStart != "0" || spot.InvEnd != "0" || spot.RefStart != "0" || spot.RefEnd != "99" {
		t.Fatalf("WETH/USD %+v", spot)
	}
	wantMarkouts("WETH/USD", spot.Markouts, 2, "2", 100)
	if pm.Book != perp || pm.Kind != "perp" || pm.PnL != (reportPnL{Total: "9.95", Spread: "10", Fees: "0", Funding: "-0.05", Inventory: "0"}) ||
		pm.Fills != 2 || pm.Maker != 0 || pm.Taker != 2 || pm.Volume != "6010" || pm.VolumeBase != "2" || pm.FillRatio != 1 ||
		pm.Top.Bid != 0 || pm.Top.Ask != 0 || pm.InvStart != "0" || pm.InvEnd != "0" || pm.RefStart != "3000" || pm.RefEnd != "3010" {
		t.Fatalf("perp %+v", pm)
	}
	wantMarkouts("perp", pm.Markouts, 2, "10", 16.6389)
	type point struct {
		t         int64
		pnl       string
		weth, prp string
	}
	wantSeries := []point{{t1, "-0.05", "0", "1"}, {t2, "9.9399", "-1", "0"}, {t3, "11.93", "0", "0"}}
	if len(r.Series) != len(wantSeries) {
		t.Fatalf("series %+v", r.Series)
	}
	for i, w := range wantSeries {
		if p := r.Series[i]; p.T != w.t || p.PnL != w.pnl || p.Inventory["WETH/USD"] != w.weth || p.Inventory["F-PERP"] != w.prp {
			t.Fatalf("series point %d %+v, want %+v", i, p, w)
		}
	}

	// The fills stored for A: the same count, volume and maker flags.
	rows := tn.fills(t, a.addr(), map[string]any{"from_ts": t1}, 10)
	vol, maker := new(big.Int), 0
	for _, f := range rows {
		vol.Add(vol, f.Quote.ToInt())
		if f.Maker {
			maker++
		}
	}
	if len(rows) != r.Fills || maker != r.Maker || vol.Cmp(quoteWei(t, r.Volume)) != 0 {
		t.Fatalf("ob_getFills: %d rows, %d maker, volume %v; the report %d, %d, %s", len(rows), maker, vol, r.Fills, r.Maker, r.Volume)
	}

	// REST: the same JSON; the per-market CSV and the series CSV.
	path := fmt.Sprintf("/v1/lab/report/%s?from=%d", a.addr(), t1)
	if code, _, body := restGet(t, tn, "GET", path); code != 200 || string(body) != string(raw) {
		t.Fatalf("GET %s: %d\n%s\nlab_strategyReport:\n%s", path, code, body, raw)
	}
	resp, body := httpDo(t, tn, "GET", path+"&format=csv")
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" || len(lines) != 4 ||
		lines[1] != "WETH/USD,"+wethBook.Hex()+",spot,USD,true,1.98,3,-0.02,0,-1,2,2,0,200,2,1,0.090909,0.045455,2,100,2,0,2,100,2,0,0,0,0,2,0,0,0,99" ||
		lines[3] != "TOTAL,,,USD,true,11.93,13,-0.02,-0.05,-1,4,2,2,6210,,1,,,12,19.3237,4,0,12,19.3237,4,0,0,0,0,4,,,," {
		t.Fatalf("CSV %d %q:\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if h := strings.Split(lines[0], ","); len(h) != len(strings.Split(lines[1], ",")) || len(h) != len(strings.Split(lines[3], ",")) {
		t.Fatalf("CSV rows and header differ in width:\n%s", body)
	}
	if resp, body := httpDo(t, tn, "GET", path+"&format=csv&series=1"); resp.StatusCode != 200 || string(body) !=
		fmt.Sprintf("t,pnl,WETH/USD,F-PERP\n%d,-0.05,0,1\n%d,9.9399,-1,0\n%d,11.93,0,0\n", t1, t2, t3) {
		t.Fatalf("series CSV %d:\n%s", resp.StatusCode, body)
	}

	// A window that ends at t2: the perp's 1 s markout of its buy is then
	// pending, and t3's fill is outside.
	r2, _ := report(t, tn.rpc, map[string]any{"account": a.addr(), "from": t1, "to": t2})
	if r2.Fills != 3 || r2.To != t2 || r2.Markouts[0].Fills != 0 || r2.Markouts[0].Pending != 3 {
		t.Fatalf("window [t1, t2]: %+v", r2)
	}
}

// quoteWei parses a report's decimal amount (quote units) into wei.
func quoteWei(t *testing.T, s string) *big.Int {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("amount %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt(e18))
	if !r.IsInt() {
		t.Fatalf("amount %q is not whole wei", s)
	}
	return r.Num()
}

// TestStrategyReportBadInput: lab_strategyReport refuses a bad query with
// -32602 naming the field, gives an account without fills an empty
// report, and needs the admin token without --dev; the REST path answers
// 400 and 401 alike.
func TestStrategyReportBadInput(t *testing.T) {
	tn := startNode(t) // not --dev: the admin token is needed
	acct := devAddr(5)
	for _, c := range []struct {
		q    any
		data string
	}{
		{nil, "report query: want an object {account, from?, to?}"},
		{map[string]any{}, "account: want a 20-byte 0x address"},
		{map[string]any{"account": "0x12"}, "account: want a 20-byte 0x address"},
		{map[string]any{"account": acct, "from": "soon"}, "from: want a time in µs (an integer or 0x quantity)"},
		{map[string]any{"account": acct, "to": -1}, "to: want a time in µs (an integer or 0x quantity)"},
		{map[string]any{"account": acct, "from": 9, "to": 8}, "to: before from"},
		{map[string]any{"account": acct, "form": 9}, `report query: unknown member "form"; it takes account, from, to`},
	} {
		err := tn.admin.CallContext(context.Background(), nil, "lab_strategyReport", c.q)
		wantRPCError(t, err, -32602, "Invalid params", c.data)
	}
	err := tn.rpc.CallContext(context.Background(), nil, "lab_strategyReport", map[string]any{"account": acct})
	if code := rpcCode(err); code != -32600 {
		t.Fatalf("without the token: %v", err)
	}
	r, raw := report(t, tn.admin, map[string]any{"account": acct})
	if r.Fills != 0 || len(r.Markets) != 0 || len(r.Series) != 0 || r.PnL.Total != "0" || r.From != 0 || !r.Complete {
		t.Fatalf("an account without fills: %s", raw)
	}
	for path, want := range map[string]string{
		"/v1/lab/report/0x12":                           "bad account: want 0x and 40 hex digits",
		"/v1/lab/report/" + acct.Hex() + "?from=x":      "bad from: want microseconds, a decimal integer >= 0",
		"/v1/lab/report/" + acct.Hex() + "?format=x":    "bad format: want json or csv",
		"/v1/lab/report/" + acct.Hex() + "?series=1":    "bad series: the JSON holds the series; series=1 needs format=csv",
		"/v1/lab/report/" + acct.Hex() + "?from=9&to=8": "bad to: before from",
	} {
		resp, body := httpDo(t, tn, "GET", path, "Authorization", "Bearer "+testAdminToken)
		var e struct{ Error string }
		if json.Unmarshal(body, &e); resp.StatusCode != 400 || e.Error != want {
			t.Fatalf("GET %s: %d %s, want 400 %q", path, resp.StatusCode, body, want)
		}
	}
	if resp, body := httpDo(t, tn, "GET", "/v1/lab/report/"+acct.Hex()); resp.StatusCode != 401 {
		t.Fatalf("GET without the token: %d %s", resp.StatusCode, body)
	}
}

// TestStrategyReportValueIdentity: a seeded random session of four
// accounts on WETH/USD and a perp market whose oracle walks and whose
// funding runs, orders of random side, price and size living three ticks.
// For the account under test: the report's total is the change of its
// value (native balance + perp unrealized PnL + WETH at the reference)
// less the gas it paid and the reference's move on the WETH it held
// before its first fill; the WETH/USD part is the cash its fills moved
// (ob_getFills) plus its final inventory at the reference; and every PnL
// is the sum of its parts.
func TestStrategyReportValueIdentity(t *testing.T) {
	tn := startNodeWith(t, nodeSetup{rpc: devMode})
	m := fundedPerpMarket("W-PERP")
	m["oracle_walk_bps"] = 5
	perp := tn.createMarket(t, m)
	senders := []*obSender{tn.sender(t, 0), tn.sender(t, 1), tn.sender(t, 2), tn.sender(t, 3)}
	a := senders[0]
	tn.cross(t, senders[1], senders[2], wethBook, eth(1), eth(2000)) // a reference for WETH/USD
	tn.tick(t)
	tn.tick(t)
	value := func() (*big.Int, *big.Rat) {
		p := tn.positions(t, tn.rpc, a.addr())
		u, ok := new(big.Int).SetString(p.TotalUnrealized, 10)
		if !ok {
			u = new(big.Int) // null: no perp position
		}
		return new(big.Int).Add(callView(t, tn, "balanceOf", native, a.addr()), u),
			new(big.Rat).SetInt(callView(t, tn, "balanceOf", weth, a.addr()))
	}
	cash0, weth0 := value()
	from := tn.node.Clock().NowMicros() + intervalUs
	rng := rand.New(rand.NewPCG(28, 4))
	gas := new(big.Int)
	for range 30 {
		for i, s := range senders {
			for range rng.IntN(3) {
				book, mid := wethBook, int64(2000)
				if rng.IntN(2) == 0 {
					book, mid = perp, 3000
				}
				size := new(big.Int).Mul(big.NewInt(1e17), big.NewInt(1+rng.Int64N(3)))
				if rng.IntN(2) == 0 {
					size.Neg(size)
				}
				r := s.mustSend(t, tn.submit(t, book, size, eth(mid-5+rng.Int64N(11)), 0, 3*intervalUs, 0))
				if i == 0 {
					gas.Add(gas, gasCost(r))
				}
			}
		}
		tn.tick(t)
	}
	for range 4 {
		tn.tick(t) // every order has expired
	}
	r, raw := report(t, tn.rpc, map[string]any{"account": a.addr(), "from": from})
	if r.Fills < 5 || len(r.Markets) != 2 || r.Markets[0].Book != wethBook || r.Markets[1].Book != perp {
		t.Fatalf("too quiet a session: %s", raw)
	}
	rat := func(s string) *big.Rat {
		v, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("amount %q", s)
		}
		return v
	}
	sum := func(p reportPnL) *big.Rat {
		v := new(big.Rat).Add(rat(p.Spread), rat(p.Fees))
		return v.Add(v.Add(v, rat(p.Funding)), rat(p.Inventory))
	}
	wei := new(big.Rat).SetInt(e18)
	total := new(big.Rat)
	for _, mk := range r.Markets {
		if sum(mk.PnL).Cmp(rat(mk.PnL.Total)) != 0 {
			t.Fatalf("%s: the parts do not add up: %+v", mk.Market, mk.PnL)
		}
		total.Add(total, rat(mk.PnL.Total))
	}
	if sum(r.PnL).Cmp(rat(r.PnL.Total)) != 0 || total.Cmp(rat(r.PnL.Total)) != 0 {
		t.Fatalf("totals %+v, markets add up to %v", r.PnL, total.FloatString(18))
	}
	// Value: the ledger's, in quote units.
	cash1, weth1 := value()
	spot := r.Markets[0]
	refMove := new(big.Rat).Sub(rat(spot.RefEnd), rat(spot.RefStart))
	held := new(big.Rat).Quo(weth0, wei) // WETH held before the window (no fill before it)
	v0 := new(big.Rat).Add(new(big.Rat).Quo(new(big.Rat).SetInt(cash0), wei), new(big.Rat).Mul(held, rat(spot.RefStart)))
	v1 := new(big.Rat).Add(new(big.Rat).Quo(new(big.Rat).SetInt(cash1), wei), new(big.Rat).Mul(new(big.Rat).Quo(weth1, wei), rat(spot.RefEnd)))
	want := new(big.Rat).Sub(v1, v0)
	want.Add(want, new(big.Rat).Quo(new(big.Rat).SetInt(gas), wei))
	want.Sub(want, new(big.Rat).Mul(held, refMove))
	if want.Cmp(rat(r.PnL.Total)) != 0 {
		t.Fatalf("value moved %s (gas and the held WETH's move taken out), the report's total %s", want.FloatString(18), r.PnL.Total)
	}
	// WETH/USD from its fills: Σ(−s·Q − fee) + inventory at the end × r(to).
	flows := new(big.Rat)
	for _, f := range tn.fills(t, a.addr(), map[string]any{"from_ts": from, "orderbook_id": wethBook}, 100) {
		q := new(big.Rat).SetInt(f.Quote.ToInt())
		if f.Side == "buy" {
			q.Neg(q)
		}
		flows.Add(flows, q.Sub(q, new(big.Rat).SetInt(f.Fee.ToInt())))
	}
	flows.Quo(flows, wei)
	flows.Add(flows, new(big.Rat).Mul(rat(spot.InvEnd), rat(spot.RefEnd)))
	if flows.Cmp(rat(spot.PnL.Total)) != 0 {
		t.Fatalf("WETH/USD: fills' cash and final inventory %s, the report %s", flows.FloatString(18), spot.PnL.Total)
	}
	t.Logf("%d fills; WETH/USD %+v; perp %+v", r.Fills, spot.PnL, r.Markets[1].PnL)
	if rat(r.Markets[1].PnL.Funding).Sign() == 0 || rat(r.Markets[1].InvStart).Sign() != 0 {
		t.Fatalf("the perp paid no funding, or had a position before the window: %s", raw)
	}
}
