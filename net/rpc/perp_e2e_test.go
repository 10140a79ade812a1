package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/node"
)

// Perpetual markets over the wire (docs/perps.md). Tests named TestPerpE2E…
// need the perp engine and the triggers (the skeleton's stubs report no
// perp state); the others pass against the skeleton too.

// perpMarket is admin_createMarket's object for a test perp market: ETH
// steps of 0.01, lots of 0.001, 20× leverage, oracle at 3000, no fees, no
// funding, no premium and no mark clamp (the mark is the oracle), no walk.
func perpMarket(name string) map[string]any {
	return map[string]any{
		"name": name, "base": "0x00000000000000000000000000000000000000ee", "base_symbol": "ETH", "quote_symbol": "USD",
		"tick_precision": hexutil.EncodeBig(big.NewInt(1e16)), "lot_size": hexutil.EncodeBig(big.NewInt(1e15)),
		"market_type": "perpetual", "max_leverage": 20, "oracle_price": hexutil.EncodeBig(eth(3000)),
		"interest_rate": 0, "max_funding_rate": 0, "max_premium": 0, "mark_clamp": hexutil.EncodeBig(e18),
		"oracle_walk_bps": 0,
	}
}

func (tn *testNode) createMarket(t *testing.T, m map[string]any) common.Hash {
	t.Helper()
	var out struct {
		ID common.Hash `json:"id"`
	}
	if err := tn.admin.CallContext(context.Background(), &out, "admin_createMarket", m); err != nil {
		t.Fatalf("admin_createMarket: %v (%v)", err, errorData(err))
	}
	return out.ID
}

func (tn *testNode) setOracle(t *testing.T, book common.Hash, price *big.Int) {
	t.Helper()
	var ok bool
	if err := tn.admin.CallContext(context.Background(), &ok, "admin_setOraclePrice",
		map[string]any{"orderbook_id": book, "price": hexutil.EncodeBig(price)}); err != nil || !ok {
		t.Fatalf("admin_setOraclePrice: %v %v (%v)", ok, err, errorData(err))
	}
}

// TestAdminCreatePerpMarket: the perp parameters are checked field by field
// (-32602 naming the field), a spot market refuses them, and a perp market
// is listed as "perpetual".
func TestAdminCreatePerpMarket(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	with := func(k string, v any) map[string]any {
		m := perpMarket("X-PERP")
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	spot := func(k string, v any) map[string]any {
		m := with("market_type", "spot")
		for _, p := range []string{"max_leverage", "oracle_price", "interest_rate", "max_funding_rate", "max_premium", "mark_clamp", "oracle_walk_bps"} {
			delete(m, p)
		}
		m[k] = v
		return m
	}
	for _, c := range []struct {
		m    map[string]any
		data string
	}{
		{with("market_type", "future"), `market_type: want "spot" or "perpetual"`},
		{with("max_leverage", nil), "max_leverage: want an integer from 1 to 4294967295"},
		{with("max_leverage", 0), "max_leverage: want an integer from 1 to 4294967295"},
		{with("max_leverage", 1<<32), "max_leverage: want an integer from 1 to 4294967295"},
		{with("oracle_price", nil), "oracle_price: required for a perpetual market, a positive amount of wei"},
		{with("oracle_price", "0x0"), "oracle_price: required for a perpetual market, a positive amount of wei"},
		{with("oracle_walk_bps", 10_001), "oracle_walk_bps: want an integer from 0 to 10000"},
		{with("oracle_seed", "seed"), "oracle_seed: want a 64-bit unsigned integer"},
		{with("interest_rate", -1), "interest_rate: want a fraction of 1e18 (0x quantity or integer)"},
		{with("max_funding_rate", "x"), "max_funding_rate: want a fraction of 1e18 (0x quantity or integer)"},
		{with("max_premium", true), "max_premium: want a fraction of 1e18 (0x quantity or integer)"},
		{with("mark_clamp", "0x"), "mark_clamp: want a fraction of 1e18 (0x quantity or integer)"},
		{with("quote", "0x00000000000000000000000000000000000000aa"), "quote: a perpetual market's collateral is the native token"},
		{spot("max_leverage", 5), `max_leverage: only for market_type "perpetual"`},
		{spot("oracle_price", "0x1"), `oracle_price: only for market_type "perpetual"`},
	} {
		err := tn.admin.CallContext(ctx, nil, "admin_createMarket", c.m)
		wantRPCError(t, err, -32602, "Invalid params", c.data)
	}
	id := tn.createMarket(t, perpMarket("X-PERP"))
	if id != crypto.Keccak256Hash([]byte("X-PERP")) {
		t.Fatalf("id %s", id)
	}
	var markets []map[string]any
	if err := tn.rpc.CallContext(ctx, &markets, "ob_getMarkets"); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range markets {
		if m["id"] == strings.ToLower(id.Hex()) {
			found = m["market_type"] == "perpetual"
		} else if m["market_type"] != "spot" || m["oracle_price"] != nil || m["max_leverage"] != 1.0 {
			t.Fatalf("spot market %v", m)
		}
	}
	if !found {
		t.Fatalf("the perp market is not listed as perpetual: %v", markets)
	}
	// A second market under the same id is the engine's refusal.
	err := tn.admin.CallContext(ctx, nil, "admin_createMarket", perpMarket("X-PERP"))
	if wantRPCError(t, err, -32602, "Invalid params", nil); !strings.Contains(errorData(err).(string), "id already exists") {
		t.Fatalf("duplicate market: %v", errorData(err))
	}
}

// TestAdminSetOraclePrice: the orderbook's refusals come back as -32602
// "CLOB validation failed: <reason>"; parameters are checked by name; the
// method needs the admin token like every admin write.
func TestAdminSetOraclePrice(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	book := tn.createMarket(t, perpMarket("T-PERP"))
	tn.setOracle(t, book, eth(3100))
	set := func(p any) error { return tn.admin.CallContext(ctx, nil, "admin_setOraclePrice", p) }
	for _, c := range []struct {
		p    any
		data string
	}{
		{map[string]any{"orderbook_id": common.Hash{9}, "price": "0x1"}, "CLOB validation failed: unknown orderbook"},
		{map[string]any{"orderbook_id": wethBook, "price": hexutil.EncodeBig(eth(1))}, "CLOB validation failed: unknown orderbook"},
		{map[string]any{"orderbook_id": book, "price": "0x0"}, "CLOB validation failed: " + clob.ReasonOraclePrice.String()},
		{map[string]any{"orderbook_id": book, "price": hexutil.EncodeBig(big.NewInt(1e16 + 1))}, "CLOB validation failed: " + clob.ReasonOraclePrice.String()},
		{map[string]any{"price": "0x1"}, "orderbook_id: want 0x followed by 64 hex digits"},
		{map[string]any{"orderbook_id": book}, "price: want an amount of wei (0x quantity or integer)"},
		{map[string]any{"orderbook_id": book, "price": -5}, "price: want an amount of wei (0x quantity or integer)"},
		{[]int{1}, "admin_setOraclePrice needs an object {orderbook_id, price}"},
	} {
		wantRPCError(t, set(c.p), -32602, "Invalid params", c.data)
	}
	err := tn.rpc.CallContext(ctx, nil, "admin_setOraclePrice", map[string]any{"orderbook_id": book, "price": "0x1"})
	wantRPCError(t, err, -32600, "Invalid Request", nil)
}

// TestPerpReadParams: the perp reads validate their parameters (-32602
// naming the field) and answer empty shapes for an account without
// positions or triggers, over HTTP and over WebSocket alike.
func TestPerpReadParams(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	for name, c := range map[string]*gethrpc.Client{"http": tn.rpc, "ws": tn.dialWS(t)} {
		read := func(method string, args ...any) (string, error) {
			var out json.RawMessage
			err := c.CallContext(ctx, &out, method, args...)
			return string(out), err
		}
		for _, w := range []struct {
			method, want string
			args         []any
		}{
			{"ob_getTriggers", `{"triggers":[],"total_count":0,"next_cursor":null}`, []any{devAddr(1)}},
			{"ob_getTriggers", `{"triggers":[],"total_count":0,"next_cursor":null}`, []any{devAddr(1), map[string]any{"orderbook_id": wethBook, "limit": 5}}},
			{"ob_getRankedPositions", `{"ranked":[],"total":0,"queried":null}`, nil},
			{"ob_getRankedPositions", `{"ranked":[],"total":0,"queried":null}`, []any{10, 0, devAddr(1)}},
			{"ob_getOraclePrices", `[]`, nil},
			{"ob_getFundingRates", `[]`, []any{nil}},
		} {
			if got, err := read(w.method, w.args...); err != nil || got != w.want {
				t.Fatalf("%s %s%v: %s %v, want %s", name, w.method, w.args, got, err, w.want)
			}
		}
		for _, e := range []struct {
			method, data string
			args         []any
		}{
			{"ob_getTriggers", "missing value for required argument 0", nil},
			{"ob_getTriggers", "triggers query: want an object", []any{devAddr(1), 5}},
			{"ob_getTriggers", "limit: want an integer of at least 1", []any{devAddr(1), map[string]any{"limit": 0}}},
			{"ob_getTriggers", `cursor: want "{orderbook_id}:{order_id}" as returned in next_cursor`, []any{devAddr(1), map[string]any{"cursor": "1:2"}}},
			{"ob_getTriggers", "orderbook_id: want 0x followed by 64 hex digits", []any{devAddr(1), map[string]any{"orderbook_id": "0x01"}}},
			{"ob_getRankedPositions", "limit: want an integer of at least 1, or null", []any{0}},
			{"ob_getRankedPositions", "offset: want a non-negative integer, or null", []any{5, -1}},
			{"ob_getRankedPositions", "address: want 0x followed by 40 hex digits, or null", []any{5, 0, "0x12"}},
			{"ob_getOraclePrices", "unknown orderbook", []any{common.Hash{9}}},
			{"ob_getOraclePrices", "orderbook_id: not a perpetual market", []any{wethBook}},
			{"ob_getFundingRates", "orderbook_id: not a perpetual market", []any{wbtcBook}},
		} {
			_, err := read(e.method, e.args...)
			wantRPCError(t, err, -32602, "Invalid params", e.data)
		}
	}
}

// TestBalancesWithoutPositions: for an account without perp positions the
// balances are the spot ones: eth_getBalance and withdrawableBalance are
// the unlocked cash, balanceOf the cash.
func TestBalancesWithoutPositions(t *testing.T) {
	tn := startNode(t)
	alice := tn.sender(t, 3)
	// The buy locks 1000 native and the largest fee it may pay (0.03 %).
	r := alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0))
	cash := new(big.Int).Sub(node.DevBalanceWei.ToBig(), gasCost(r))
	free := new(big.Int).Sub(cash, new(big.Int).Div(eth(10_003), big.NewInt(10)))
	bal, err := tn.eth.BalanceAt(context.Background(), alice.addr(), nil)
	if err != nil || bal.Cmp(free) != 0 {
		t.Fatalf("eth_getBalance %v %v, want %v", bal, err, free)
	}
	if w := callView(t, tn, "withdrawableBalance", native, alice.addr()); w.Cmp(free) != 0 {
		t.Fatalf("withdrawableBalance %v, want %v", w, free)
	}
	if b := callView(t, tn, "balanceOf", native, alice.addr()); b.Cmp(cash) != 0 {
		t.Fatalf("balanceOf %v, want %v", b, cash)
	}
}

// perpPosition is the part of a PerpPosition the tests read.
type perpPosition struct {
	Kind       string       `json:"kind"`
	Book       common.Hash  `json:"orderbook_id"`
	Side       string       `json:"side"`
	Size       string       `json:"size"`
	EntryPrice *hexutil.Big `json:"entry_price"`
	LiqPrice   *hexutil.Big `json:"liquidation_price"`
	MarkPrice  *hexutil.Big `json:"mark_price"`
	Margin     *hexutil.Big `json:"margin"`
	Leverage   *hexutil.Big `json:"leverage"`
	Notional   *hexutil.Big `json:"notional"`
	Unrealized string       `json:"unrealized_pnl"`
}

// positionsAnswer is the part of an ob_getPositions answer the tests read.
type positionsAnswer struct {
	Positions        []perpPosition `json:"positions"`
	TotalUnrealized  string         `json:"total_unrealized_pnl"`
	PerpsEquity      string         `json:"perps_equity"`
	Cash             string         `json:"cash"`
	WithdrawableCash *hexutil.Big   `json:"withdrawable_cash"`
}

func (tn *testNode) positions(t *testing.T, c *gethrpc.Client, a common.Address) positionsAnswer {
	t.Helper()
	var p positionsAnswer
	if err := c.CallContext(context.Background(), &p, "ob_getPositions", a); err != nil {
		t.Fatal(err)
	}
	return p
}

// perpOf returns the account's perp position on book (nil: none).
func (p positionsAnswer) perpOf(book common.Hash) *perpPosition {
	for i := range p.Positions {
		if p.Positions[i].Kind == "perp" && p.Positions[i].Book == book {
			return &p.Positions[i]
		}
	}
	return nil
}

func decimal(v *big.Int) string { return v.String() }

func (tn *testNode) balance(t *testing.T, a common.Address) *big.Int {
	t.Helper()
	b, err := tn.eth.BalanceAt(context.Background(), a, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type rankedAnswer struct {
	Ranked []struct {
		Account common.Address `json:"account"`
	} `json:"ranked"`
	Total   int `json:"total"`
	Queried *struct {
		Account common.Address `json:"account"`
		Rank    int            `json:"rank"`
	} `json:"queried"`
}

// TestPerpE2ELeveragedLongToLiquidation: two dev accounts cross 50 ETH at
// 3000 on a 20× perp market; admin_setOraclePrice moves the mark to 3100
// (the long gains 5000, eth_getBalance follows equity minus initial margin,
// the long ranks first by PnL), then to 2860, where the long's
// equity (3000) is below its maintenance (3575): the backstop takes the
// position at the mark and a penalty of half the maintenance, and the long
// is gone from ob_getPositions and ob_getRankedPositions. Reads over HTTP
// and WebSocket agree.
func TestPerpE2ELeveragedLongToLiquidation(t *testing.T) {
	tn := startNode(t)
	ws := tn.dialWS(t)
	book := tn.createMarket(t, perpMarket("T-PERP"))
	long, short := tn.sender(t, 1), tn.sender(t, 2)
	start := tn.balance(t, long.addr())
	rl := long.mustSend(t, tn.submit(t, book, eth(50), eth(3000), 0, 0, 0))
	short.mustSend(t, tn.submit(t, book, eth(-50), eth(3000), 0, 0, 0))
	tn.tick(t)
	cash := new(big.Int).Sub(start, gasCost(rl))

	p := tn.positions(t, tn.rpc, long.addr())
	pp := p.perpOf(book)
	if pp == nil || pp.Side != "long" || pp.Size != decimal(eth(50)) || pp.EntryPrice.ToInt().Cmp(eth(3000)) != 0 ||
		pp.MarkPrice.ToInt().Cmp(eth(3000)) != 0 || pp.Margin.ToInt().Cmp(eth(7500)) != 0 || pp.Leverage.ToInt().Cmp(eth(20)) != 0 ||
		pp.Notional.ToInt().Cmp(eth(150_000)) != 0 || pp.Unrealized != "0" {
		t.Fatalf("long after the cross: %+v", p)
	}
	if b := tn.balance(t, long.addr()); b.Cmp(new(big.Int).Sub(cash, eth(7500))) != 0 {
		t.Fatalf("eth_getBalance after opening: %v, want cash %v − 7500e18", b, cash)
	}
	if b := callView(t, tn, "balanceOf", native, long.addr()); b.Cmp(cash) != 0 {
		t.Fatalf("balanceOf after opening: %v, want %v (cash, no margin deducted)", b, cash)
	}
	if sp := tn.positions(t, tn.rpc, short.addr()).perpOf(book); sp == nil || sp.Side != "short" || sp.Size != "-"+decimal(eth(50)) {
		t.Fatalf("short: %+v", sp)
	}
	// Equity about 10 000, maintenance 150 000 / 40: the long meets its
	// maintenance near 2 872, the short near 3 128.
	if lp := pp.LiqPrice.ToInt(); lp.Cmp(eth(2850)) <= 0 || lp.Cmp(eth(2900)) >= 0 {
		t.Fatalf("long's liquidation price %v", lp)
	}
	if sp := tn.positions(t, tn.rpc, short.addr()).perpOf(book); sp.LiqPrice.ToInt().Cmp(eth(3100)) <= 0 || sp.LiqPrice.ToInt().Cmp(eth(3150)) >= 0 {
		t.Fatalf("short's liquidation price %v", sp.LiqPrice)
	}

	tn.setOracle(t, book, eth(3100))
	tn.tick(t)
	p = tn.positions(t, tn.rpc, long.addr())
	if pp := p.perpOf(book); pp == nil || pp.Unrealized != decimal(eth(5000)) || pp.MarkPrice.ToInt().Cmp(eth(3100)) != 0 {
		t.Fatalf("long at 3100: %+v", p)
	}
	equity := new(big.Int).Add(cash, eth(5000))
	withdrawable := new(big.Int).Sub(equity, eth(7750))
	if p.TotalUnrealized != decimal(eth(5000)) || p.PerpsEquity != decimal(equity) || p.Cash != decimal(cash) ||
		p.WithdrawableCash.ToInt().Cmp(withdrawable) != 0 {
		t.Fatalf("long's totals at 3100: %+v", p)
	}
	if b := tn.balance(t, long.addr()); b.Cmp(withdrawable) != 0 {
		t.Fatalf("eth_getBalance at 3100: %v, want %v", b, withdrawable)
	}
	if w := tn.positions(t, ws, long.addr()); w.PerpsEquity != p.PerpsEquity || w.WithdrawableCash.ToInt().Cmp(withdrawable) != 0 {
		t.Fatalf("ob_getPositions over WebSocket: %+v", w)
	}
	var ranked rankedAnswer
	if err := ws.CallContext(context.Background(), &ranked, "ob_getRankedPositions", 10, 0, long.addr()); err != nil {
		t.Fatal(err)
	}
	if ranked.Total != 2 || len(ranked.Ranked) != 2 || ranked.Ranked[0].Account != long.addr() || ranked.Ranked[1].Account != short.addr() ||
		ranked.Queried == nil || ranked.Queried.Rank != 0 {
		t.Fatalf("ranked at 3100 (the long's PnL is +5000, the short's -5000): %+v", ranked)
	}
	var oracle []struct {
		Book   common.Hash  `json:"orderbook_id"`
		Oracle *hexutil.Big `json:"oracle_price"`
		Mark   *hexutil.Big `json:"mark_price"`
	}
	if err := tn.rpc.CallContext(context.Background(), &oracle, "ob_getOraclePrices", book); err != nil ||
		len(oracle) != 1 || oracle[0].Oracle.ToInt().Cmp(eth(3100)) != 0 || oracle[0].Mark.ToInt().Cmp(eth(3100)) != 0 {
		t.Fatalf("ob_getOraclePrices: %+v %v", oracle, err)
	}

	tn.setOracle(t, book, eth(2860))
	tn.tick(t)
	p = tn.positions(t, tn.rpc, long.addr())
	// Realized −7000, penalty min(equity 3000, ceil(3575 / 2)) = 1787.5.
	after := new(big.Int).Sub(cash, eth(7000))
	after.Sub(after, new(big.Int).Div(eth(17875), big.NewInt(10)))
	if p.perpOf(book) != nil || p.Cash != decimal(after) || p.PerpsEquity != decimal(after) || p.WithdrawableCash.ToInt().Cmp(after) != 0 {
		t.Fatalf("long after liquidation: %+v, want cash %v", p, after)
	}
	if b := tn.balance(t, long.addr()); b.Cmp(after) != 0 {
		t.Fatalf("eth_getBalance after liquidation: %v, want %v", b, after)
	}
	bp := tn.positions(t, tn.rpc, common.Address(clob.BackstopAddress)).perpOf(book)
	if bp == nil || bp.Size != decimal(eth(50)) || bp.EntryPrice.ToInt().Cmp(eth(2860)) != 0 {
		t.Fatalf("backstop's position: %+v", bp)
	}
	if sp := tn.positions(t, ws, short.addr()).perpOf(book); sp == nil || sp.Unrealized != decimal(eth(7000)) {
		t.Fatalf("short at 2860: %+v", sp)
	}
	ranked = rankedAnswer{}
	if err := tn.rpc.CallContext(context.Background(), &ranked, "ob_getRankedPositions", nil, nil, long.addr()); err != nil {
		t.Fatal(err)
	}
	if ranked.Total != 1 || len(ranked.Ranked) != 1 || ranked.Ranked[0].Account != short.addr() || ranked.Queried != nil {
		t.Fatalf("ranked after liquidation: %+v", ranked)
	}
}

// TestPerpE2EBadDebtNegativeBalanceOf: a jump from 3000 to 2700 leaves the
// 20× long at equity −(15000 − cash): it is liquidated without penalty, its
// debt is cleared by the backstop, whose balanceOf then reads negative
// through the int256 view (two's complement on the ABI).
func TestPerpE2EBadDebtNegativeBalanceOf(t *testing.T) {
	tn := startNode(t)
	book := tn.createMarket(t, perpMarket("T-PERP"))
	long, short := tn.sender(t, 1), tn.sender(t, 2)
	start := tn.balance(t, long.addr())
	rl := long.mustSend(t, tn.submit(t, book, eth(50), eth(3000), 0, 0, 0))
	short.mustSend(t, tn.submit(t, book, eth(-50), eth(3000), 0, 0, 0))
	tn.tick(t)
	cash := new(big.Int).Sub(start, gasCost(rl))
	tn.setOracle(t, book, eth(2700))
	tn.tick(t)
	if b := callView(t, tn, "balanceOf", native, long.addr()); b.Sign() != 0 {
		t.Fatalf("long's balanceOf after bad debt: %v, want 0", b)
	}
	deficit := new(big.Int).Sub(eth(15_000), cash)
	if b := callView(t, tn, "balanceOf", native, common.Address(clob.BackstopAddress)); b.Cmp(new(big.Int).Neg(deficit)) != 0 {
		t.Fatalf("backstop's balanceOf: %v, want −%v", b, deficit)
	}
	// Its equity is negative: nothing is withdrawable (never below zero).
	if w := callView(t, tn, "withdrawableBalance", native, common.Address(clob.BackstopAddress)); w.Sign() != 0 {
		t.Fatalf("backstop's withdrawableBalance: %v, want 0", w)
	}
}

// TestPerpE2ERefusals provokes every refusal of a perp order over the wire,
// each with its reason and nothing consumed.
func TestPerpE2ERefusals(t *testing.T) {
	tn := startNode(t)
	book := tn.createMarket(t, perpMarket("T-PERP"))
	s := tn.sender(t, 3)
	d := tn.nextDeadline()
	sub := func(book common.Hash, size, price *big.Int, flags uint8) []byte {
		return pack(t, "submitOrder", book, size, price, uint8(0), d, new(big.Int), flags)
	}
	f := func(reason string, data []byte) {
		t.Helper()
		_, err := s.send(t, data)
		wantRPCError(t, err, 3, "execution reverted", nil)
		got, uerr := abi.UnpackRevert(common.FromHex(errorData(err).(string)))
		if uerr != nil || got != "CLOB validation failed: "+reason {
			t.Fatalf("revert %q (%v), want %q", got, uerr, "CLOB validation failed: "+reason)
		}
	}
	// 100 ETH at 3000 with 20×: initial margin 15000 > 10000 of equity.
	f("insufficient margin", sub(book, eth(100), eth(3000), 0))
	f("insufficient margin", sub(book, eth(-100), eth(3000), 0))
	f("REDUCE_ONLY order would not reduce the position", sub(book, eth(-1), eth(3000), 0x01))
	f("REDUCE_ONLY order would not reduce the position", sub(book, eth(1), eth(3000), 0x01))
	f("REDUCE_ONLY is only allowed on perpetual markets", sub(wethBook, eth(1), eth(1000), 0x01))
	f("size is not a multiple of the lot size", sub(book, big.NewInt(1), eth(3000), 0))
	f("price is not a multiple of the tick precision", sub(book, eth(1), big.NewInt(1), 0))
	if s.nonce != 0 || tn.balance(t, s.addr()).Cmp(node.DevBalanceWei.ToBig()) != 0 {
		t.Fatalf("refusals consumed: nonce %d", s.nonce)
	}
	// Within margin, the same account is admitted: 60 ETH needs 9000.
	s.mustSend(t, sub(book, eth(60), eth(3000), 0))
}

// TestPerpE2EOracleSurvivesRestart: admin_setOraclePrice is a logged input:
// after a restart the oracle is where it was set, frozen.
func TestPerpE2EOracleSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	sameDir := func(c *node.Config) { c.DataDir = dir }
	tn := startNodeWith(t, nodeSetup{}, sameDir)
	m := perpMarket("W-PERP")
	m["oracle_walk_bps"], m["oracle_seed"] = 50, 7
	book := tn.createMarket(t, m)
	tn.setOracle(t, book, eth(2500))
	tn.tick(t)
	tn.tick(t)
	var before, after json.RawMessage
	if err := tn.rpc.CallContext(context.Background(), &before, "ob_getOraclePrices", book); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(before), `"oracle_price":"`+hexutil.EncodeBig(eth(2500))+`"`) {
		t.Fatalf("frozen oracle: %s", before)
	}
	tn.stop()
	tn = startNodeWith(t, nodeSetup{}, sameDir)
	if err := tn.rpc.CallContext(context.Background(), &after, "ob_getOraclePrices", book); err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatalf("after a restart %s, before %s", after, before)
	}
}

// TestPerpE2EDevMarketsWalk: dev mode's ETH-PERP and BTC-PERP are listed as
// perpetual with their leverage, and their oracles move tick by tick.
func TestPerpE2EDevMarketsWalk(t *testing.T) {
	tn := startNode(t, func(c *node.Config) { c.Markets = append(c.Markets, node.DevPerpMarkets()...) })
	read := func() []map[string]any {
		var ms []map[string]any
		if err := tn.rpc.CallContext(context.Background(), &ms, "ob_getOraclePrices"); err != nil || len(ms) != 2 {
			t.Fatalf("ob_getOraclePrices: %v %v", ms, err)
		}
		return ms
	}
	first := read()
	moved := false
	for range 5 {
		tn.tick(t)
		now := read()
		moved = moved || now[0]["oracle_price"] != first[0]["oracle_price"] && now[1]["oracle_price"] != first[1]["oracle_price"]
	}
	if !moved {
		t.Fatalf("the dev oracles did not walk: %v", first)
	}
	var markets []map[string]any
	if err := tn.rpc.CallContext(context.Background(), &markets, "ob_getMarkets"); err != nil {
		t.Fatal(err)
	}
	for _, m := range markets[2:] {
		if m["market_type"] != "perpetual" || m["max_leverage"] == 1.0 || m["mark_price"] == nil || m["funding_index"] == nil {
			t.Fatalf("dev perp market: %v", m)
		}
	}
}

// triggerABI holds the trigger calls (shared/DESIGN.md).
var triggerABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
	{"name":"submitTrigger","type":"function","inputs":[{"name":"orderbookId","type":"bytes32"},{"name":"size","type":"int256"},{"name":"limitPrice","type":"uint256"},{"name":"triggerPrice","type":"uint256"},{"name":"triggerType","type":"uint8"},{"name":"grouping","type":"uint8"},{"name":"deadline","type":"uint128"},{"name":"ttl","type":"uint128"},{"name":"reduceOnly","type":"bool"},{"name":"ioc","type":"bool"}],"outputs":[]},
	{"name":"cancelTrigger","type":"function","inputs":[{"name":"orderbookId","type":"bytes32"},{"name":"triggerId","type":"bytes32"},{"name":"deadline","type":"uint128"}],"outputs":[]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

func packTrigger(t *testing.T, method string, args ...any) []byte {
	t.Helper()
	data, err := triggerABI.Pack(method, args...)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

type triggersAnswer struct {
	Triggers []struct {
		Book         common.Hash    `json:"orderbook_id"`
		ID           common.Hash    `json:"order_id"`
		Bidder       common.Address `json:"bidder"`
		Nonce        uint64         `json:"nonce"`
		Size         string         `json:"size"`
		LimitPrice   *hexutil.Big   `json:"limit_price"`
		TriggerPrice *hexutil.Big   `json:"trigger_price"`
		TriggerType  string         `json:"trigger_type"`
		Grouping     string         `json:"grouping"`
		ReduceOnly   bool           `json:"reduce_only"`
		Deadline     int64          `json:"deadline"`
		End          *int64         `json:"end"`
	} `json:"triggers"`
	Total int     `json:"total_count"`
	Next  *string `json:"next_cursor"`
}

// TestPerpE2ETriggers: a take-profit / stop-loss pair on a long is listed by
// ob_getTriggers (paged by its cursor), every trigger refusal comes back
// with its reason, and when the mark crosses the take-profit it leaves the
// list; its market order finds no buyer, so the position and its
// asset-grouped stop-loss stay (no one-cancels-the-other).
func TestPerpE2ETriggers(t *testing.T) {
	tn := startNode(t)
	book := tn.createMarket(t, perpMarket("T-PERP"))
	long, short := tn.sender(t, 1), tn.sender(t, 2)
	tn.cross(t, long, short, book, eth(1), eth(3000))
	tn.tick(t)
	d := tn.nextDeadline()
	trig := func(book common.Hash, size, limit, price *big.Int, typ, group uint8) []byte {
		return packTrigger(t, "submitTrigger", book, size, limit, price, typ, group, d, new(big.Int), true, false)
	}
	tpNonce := long.nonce
	long.mustSend(t, trig(book, eth(-1), new(big.Int), eth(3300), clob.TriggerTakeProfit, clob.GroupingAsset))
	slNonce := long.nonce
	long.mustSend(t, trig(book, eth(-1), eth(2790), eth(2800), clob.TriggerStopLoss, clob.GroupingAsset))
	stored := d.Int64()
	tn.tick(t) // the mark stays 3000: neither fires
	d = tn.nextDeadline()

	var all triggersAnswer
	if err := tn.rpc.CallContext(context.Background(), &all, "ob_getTriggers", long.addr()); err != nil {
		t.Fatal(err)
	}
	if all.Total != 2 || len(all.Triggers) != 2 || all.Next != nil {
		t.Fatalf("triggers: %+v", all)
	}
	ids := map[common.Hash]uint64{orderID(long.addr(), tpNonce, 0): tpNonce, orderID(long.addr(), slNonce, 0): slNonce}
	for _, tr := range all.Triggers {
		if nonce, ok := ids[tr.ID]; !ok || tr.Nonce != nonce || tr.Book != book || tr.Bidder != long.addr() || tr.Size != "-"+decimal(eth(1)) ||
			tr.Grouping != "asset" || !tr.ReduceOnly || tr.Deadline != stored || tr.End != nil {
			t.Fatalf("trigger %+v", tr)
		}
		if tr.ID == orderID(long.addr(), tpNonce, 0) && (tr.TriggerType != "take_profit" || tr.TriggerPrice.ToInt().Cmp(eth(3300)) != 0 || tr.LimitPrice.ToInt().Sign() != 0) {
			t.Fatalf("take-profit %+v", tr)
		}
		if tr.ID == orderID(long.addr(), slNonce, 0) && (tr.TriggerType != "stop_loss" || tr.LimitPrice.ToInt().Cmp(eth(2790)) != 0) {
			t.Fatalf("stop-loss %+v", tr)
		}
	}
	var first, second triggersAnswer
	if err := tn.rpc.CallContext(context.Background(), &first, "ob_getTriggers", long.addr(), map[string]any{"limit": 1}); err != nil ||
		len(first.Triggers) != 1 || first.Next == nil || first.Total != 2 || first.Triggers[0].ID != all.Triggers[0].ID {
		t.Fatalf("first page: %+v %v", first, err)
	}
	if err := tn.rpc.CallContext(context.Background(), &second, "ob_getTriggers", long.addr(), map[string]any{"limit": 1, "cursor": *first.Next}); err != nil ||
		len(second.Triggers) != 1 || second.Next != nil || second.Triggers[0].ID != all.Triggers[1].ID {
		t.Fatalf("second page: %+v %v", second, err)
	}

	f := func(reason string, data []byte) {
		t.Helper()
		_, err := long.send(t, data)
		wantRPCError(t, err, 3, "execution reverted", nil)
		if got, _ := abi.UnpackRevert(common.FromHex(errorData(err).(string))); got != "CLOB validation failed: "+reason {
			t.Fatalf("revert %q, want %q", got, "CLOB validation failed: "+reason)
		}
	}
	f("triggers are only allowed on perpetual markets", trig(wethBook, eth(-1), new(big.Int), eth(3300), 1, 0))
	f("unknown trigger type", trig(book, eth(-1), new(big.Int), eth(3300), 2, 0))
	f("unknown trigger grouping", trig(book, eth(-1), new(big.Int), eth(3300), 1, 2))
	f("trigger price is zero", trig(book, eth(-1), new(big.Int), new(big.Int), 1, 0))
	f("trigger price is not a multiple of the tick precision", trig(book, eth(-1), new(big.Int), big.NewInt(1e16+1), 1, 0))
	f("unknown trigger", packTrigger(t, "cancelTrigger", book, common.Hash{7}, d))

	tn.setOracle(t, book, eth(3300))
	tn.tick(t)
	tn.tick(t)
	var after triggersAnswer
	if err := tn.rpc.CallContext(context.Background(), &after, "ob_getTriggers", long.addr()); err != nil || after.Total != 1 ||
		len(after.Triggers) != 1 || after.Triggers[0].ID != orderID(long.addr(), slNonce, 0) {
		t.Fatalf("after the take-profit fired: %+v %v", after, err)
	}
}
