package subs

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
	"github.com/valyala/fastjson"
)

// fakeConn records what the hub sends. refuseAt > 0 makes the refuseAt-th
// Send (1-based) and every later one fail.
type fakeConn struct {
	bodies   [][]byte // payloads, as given (identity checks)
	msgs     []string // whole messages
	closes   []string
	sends    int
	refuseAt int
	// refuseSub, when set, refuses every message of that subscription.
	refuseSub string
	// addr is RemoteIP (the zero Addr unless a test sets it).
	addr netip.Addr
}

func (c *fakeConn) Send(head, body, tail []byte) bool {
	c.sends++
	if c.refuseAt > 0 && c.sends >= c.refuseAt {
		return false
	}
	if c.refuseSub != "" && strings.Contains(string(head), `"`+c.refuseSub+`"`) {
		return false
	}
	c.bodies = append(c.bodies, body)
	c.msgs = append(c.msgs, string(head)+string(body)+string(tail))
	return true
}

func (c *fakeConn) SendClose(msg []byte) { c.closes = append(c.closes, string(msg)) }

func (c *fakeConn) RemoteIP() netip.Addr { return c.addr }

// note is a decoded notification.
type note struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  struct {
		Subscription string          `json:"subscription"`
		Result       json.RawMessage `json:"result"`
		Error        *struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	} `json:"params"`
}

func decode(t *testing.T, msg string) note {
	t.Helper()
	var n note
	if err := json.Unmarshal([]byte(msg), &n); err != nil {
		t.Fatalf("invalid JSON %q: %v", msg, err)
	}
	if n.JSONRPC != "2.0" || n.Method != "eth_subscription" {
		t.Fatalf("bad envelope %q", msg)
	}
	return n
}

func results(t *testing.T, c *fakeConn, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range c.msgs {
		n := decode(t, m)
		if n.Params.Subscription != id {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(n.Params.Result, &v); err != nil {
			t.Fatalf("result not an object: %s", n.Params.Result)
		}
		out = append(out, v)
	}
	return out
}

func rawResults(t *testing.T, c *fakeConn, id string) []string {
	t.Helper()
	var out []string
	for _, m := range c.msgs {
		n := decode(t, m)
		if n.Params.Subscription == id {
			out = append(out, string(n.Params.Result))
		}
	}
	return out
}

func bookID(n byte) clob.Hash  { var h clob.Hash; h[31] = n; return h }
func addr(n byte) clob.Address { var a clob.Address; a[19] = n; return a }
func orderID(n byte) clob.Hash { var h clob.Hash; h[0] = 0xaa; h[31] = n; return h }
func txHash(n byte) clob.Hash  { var h clob.Hash; h[0] = 0x77; h[31] = n; return h }
func u(v uint64) uint256.Int   { return *uint256.NewInt(v) }
func hexOf(b []byte) string {
	const d = "0123456789abcdef"
	s := []byte("0x")
	for _, x := range b {
		s = append(s, d[x>>4], d[x&15])
	}
	return string(s)
}
func hexHash(h clob.Hash) string    { return hexOf(h[:]) }
func hexAddr(a clob.Address) string { return hexOf(a[:]) }

// tickBuilder assembles a synthetic Tick book by book.
type tickBuilder struct{ t *tickrec.Tick }

func newTick(us int64) *tickBuilder {
	return &tickBuilder{t: &tickrec.Tick{TickUs: us, Hash: bookID(byte(us / 1000)), Result: clob.TickResult{TickUs: us}}}
}

var testConfigs = map[clob.Hash]*clob.MarketConfig{}

func marketConfig(id clob.Hash) *clob.MarketConfig {
	if c, ok := testConfigs[id]; ok {
		return c
	}
	c := &clob.MarketConfig{ID: id, Name: "WETH/USD", BaseSymbol: "WETH", QuoteSymbol: "USD", IntervalUs: 500_000,
		TickPrecision: u(1e15), LotSize: u(1e15)}
	testConfigs[id] = c
	return c
}

// book adds a book that ran, with its events and created orders.
func (b *tickBuilder) book(id clob.Hash, traded bool, created []marketdata.OrderMeta, events ...clob.Event) *tickBuilder {
	first := len(b.t.Result.Events)
	for i := range events {
		events[i].Book = id
	}
	b.t.Result.Events = append(b.t.Result.Events, events...)
	bt := clob.BookTick{Book: id, Price: w(2000), HasPrice: true, Traded: traded, VolumeBase: w(3),
		VolumeQuote: w(6000), NewOrders: len(created), FirstEvent: first, EndEvent: len(b.t.Result.Events)}
	b.t.Result.Books = append(b.t.Result.Books, bt)
	levels := []clob.Level{{Price: w(1999), Volume: w(1), Orders: 1}, {Price: w(1998), Volume: w(2), Orders: 2}, {Price: w(1997), Volume: w(3), Orders: 3}}
	asks := []clob.Level{{Price: w(2001), Volume: w(1), Orders: 1}, {Price: w(2002), Volume: w(1), Orders: 1}}
	b.t.Books = append(b.t.Books, tickrec.BookUpdate{
		Snapshot: marketdata.Snapshot{Book: id, Buys: levels, Sells: asks, ClearingPrice: bt.Price, GroupingPrice: u(1e15),
			TimestampUs: b.t.TickUs, NewOrdersCount: len(created), BuysCount: 6, SellsCount: 2},
		Created: created,
	})
	b.t.Markets = append(b.t.Markets, marketdata.Market{Config: marketConfig(id), LastPrice: bt.Price, HasPrice: true, Volume24h: w(3)})
	return b
}

func (b *tickBuilder) transfer(from, to clob.Address, amount uint64) *tickBuilder {
	b.t.Result.Events = append(b.t.Result.Events, clob.Event{Kind: clob.EventTransfer, Owner: from, To: to, Token: addr(0xee), Amount: u(amount)})
	return b
}

// meta is an order created in a tick.
func meta(n byte, book clob.Hash, owner clob.Address, side clob.Side) marketdata.OrderMeta {
	return marketdata.OrderMeta{ID: orderID(n), Book: book, Owner: owner, Signer: owner, TxHash: txHash(n), Nonce: uint64(n),
		Side: side, Price: w(2000), Size: w(2)}
}

func subscribe(t *testing.T, h *Hub, c Conn, typ, params string) string {
	t.Helper()
	id, err := subscribeErr(h, c, typ, params)
	if err != nil {
		t.Fatalf("subscribe %s %s: %v", typ, params, err)
	}
	if !h.Activate(c, id) {
		t.Fatalf("activate %s failed", id)
	}
	return id
}

func subscribeErr(h *Hub, c Conn, typ, params string) (string, *jsonrpc.Error) {
	var v *fastjson.Value
	if params != "" {
		v = fastjson.MustParse(params)
	}
	return h.Subscribe(c, []byte(typ), v)
}

// w is n whole tokens (n × 1e18 wei).
func w(n uint64) uint256.Int {
	var z uint256.Int
	z.Mul(uint256.NewInt(n), uint256.NewInt(1_000_000_000_000_000_000))
	return z
}

// testBody is a ReceiptBody of fixed JSON.
type testBody struct {
	json string
	logs []testLog
}

// testLog is one log of a testBody: its filter fields and its JSON.
type testLog struct {
	Log
	json string
}

func rbody(json string, logs ...testLog) ReceiptBody { return &testBody{json, logs} }

func (b *testBody) AppendReceipt(dst []byte) []byte { return append(dst, b.json...) }
func (b *testBody) LogCount() int                   { return len(b.logs) }
func (b *testBody) AppendLog(dst []byte, i int) []byte {
	return append(dst, b.logs[i].json...)
}

func (b *testBody) Log(i int, topics []clob.Hash) Log {
	l := b.logs[i].Log
	l.Topics = append(topics, l.Topics...)
	return l
}
