package obwire

import (
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
)

// Fixtures: spot markets A and B quoted in one token, orders and one-book
// ticks as the index takes them, so the encoders see what the index gives.

func hashOf(b byte) (h clob.Hash)    { h[31] = b; return h }
func addrOf(b byte) (a clob.Address) { a[19] = b; return a }
func dec(s string) uint256.Int       { return *uint256.MustFromDecimal(s) }

const (
	e18 = "1000000000000000000"
	e17 = "100000000000000000"
)

var (
	bookA, bookB  = hashOf(1), hashOf(2)
	baseA, quoteA = addrOf(0x11), addrOf(0x22)
	alice, bob    = addrOf(0xa1), addrOf(0xb0)
)

// spotMarket is a market of base against quoteA: half-second auctions,
// tick 1e15, lot 1e17, taker fee 1e15.
func spotMarket(id clob.Hash, name, symbol string, base clob.Address) *clob.MarketConfig {
	return &clob.MarketConfig{ID: id, Name: name, BaseSymbol: symbol, QuoteSymbol: "USD", Kind: clob.Spot, Base: base, Quote: quoteA,
		IntervalUs: 500_000, TickPrecision: dec("1" + e18[4:]), LotSize: dec(e17), MakerFee: dec("0"), TakerFee: dec("1" + e18[4:])}
}

func marketA() *clob.MarketConfig { return spotMarket(bookA, "WETH/USD", "WETH", baseA) }
func marketB() *clob.MarketConfig { return spotMarket(bookB, "WBTC/USD", "WBTC", addrOf(0x33)) }

// newTestIndex indexes markets A and B, B added first.
func newTestIndex() *marketdata.Index {
	x := marketdata.New(nil)
	x.AddMarket(marketB())
	x.AddMarket(marketA())
	return x
}

// meta is owner's limit order of one at price five, admitted at tsUs.
func meta(id byte, book clob.Hash, owner clob.Address, nonce uint64, tsUs int64, side clob.Side) *marketdata.OrderMeta {
	return &marketdata.OrderMeta{ID: hashOf(id), Book: book, Owner: owner, Signer: owner, TxHash: hashOf(0x80 | id), Nonce: nonce,
		Side: side, Type: clob.Limit, Price: dec("5" + e18[1:]), Size: dec(e18), DeadlineUs: 1_000_000, AdmittedUs: tsUs}
}

// bookTick is the one book of a tick: its clearing price ("" when it never
// cleared), the base volume it traded ("" when none), and its events.
type bookTick struct {
	book          clob.Hash
	price, volume string
	newOrders     int
	events        []clob.Event
}

// mkTick is a tick at tickUs of one book.
func mkTick(tickUs int64, bt bookTick) *clob.TickResult {
	b := clob.BookTick{Book: bt.book, NewOrders: bt.newOrders, EndEvent: len(bt.events)}
	b.Price, b.HasPrice = amount(bt.price)
	b.VolumeBase, b.Traded = amount(bt.volume)
	return &clob.TickResult{TickUs: tickUs, Books: []clob.BookTick{b}, Events: bt.events}
}

// amount is dec(s), and false for "".
func amount(s string) (uint256.Int, bool) {
	if s == "" {
		return uint256.Int{}, false
	}
	return dec(s), true
}

func ev(kind clob.EventKind, id byte) clob.Event { return clob.Event{Kind: kind, OrderID: hashOf(id)} }
