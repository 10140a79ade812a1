package obwire

import (
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
)

func hashOf(b byte) clob.Hash {
	var h clob.Hash
	h[31] = b
	return h
}

func addrOf(b byte) clob.Address {
	var a clob.Address
	a[19] = b
	return a
}

func dec(s string) uint256.Int {
	return *uint256.MustFromDecimal(s)
}

const (
	e18 = "1000000000000000000"
	e17 = "100000000000000000"
)

var (
	bookA  = hashOf(1)
	bookB  = hashOf(2)
	baseA  = addrOf(0x11)
	quoteA = addrOf(0x22)
	alice  = addrOf(0xa1)
	bob    = addrOf(0xb0)
)

func marketA() *clob.MarketConfig {
	return &clob.MarketConfig{
		ID: bookA, Name: "WETH/USD", BaseSymbol: "WETH", QuoteSymbol: "USD",
		Kind: clob.Spot, Base: baseA, Quote: quoteA, IntervalUs: 500_000,
		TickPrecision: dec("1000000000000000"), LotSize: dec(e17),
		MakerFee: dec("0"), TakerFee: dec("1000000000000000"),
	}
}

func marketB() *clob.MarketConfig {
	c := marketA()
	c.ID, c.Name, c.BaseSymbol, c.Base = bookB, "WBTC/USD", "WBTC", addrOf(0x33)
	return c
}

func newTestIndex() *marketdata.Index {
	x := marketdata.New(nil)
	x.AddMarket(marketB()) // out of order on purpose
	x.AddMarket(marketA())
	return x
}

// meta is an order admitted at tsUs by owner with the given nonce.
func meta(id byte, book clob.Hash, owner clob.Address, nonce uint64, tsUs int64, side clob.Side) *marketdata.OrderMeta {
	return &marketdata.OrderMeta{
		ID: hashOf(id), Book: book, Owner: owner, Signer: owner, TxHash: hashOf(0x80 | id),
		Nonce: nonce, Side: side, Type: clob.Limit, Price: dec("5" + e18[1:]), Size: dec(e18),
		DeadlineUs: 1_000_000, AdmittedUs: tsUs,
	}
}

// bookTick describes one book's part of a tick.
type bookTick struct {
	book      clob.Hash
	price     string // "" when the book never cleared
	volume    string // "" when nothing traded
	newOrders int
	events    []clob.Event
}

func mkTick(tickUs int64, bts ...bookTick) *clob.TickResult {
	res := &clob.TickResult{TickUs: tickUs}
	for _, bt := range bts {
		t := clob.BookTick{Book: bt.book, NewOrders: bt.newOrders, FirstEvent: len(res.Events)}
		if bt.price != "" {
			t.Price, t.HasPrice = dec(bt.price), true
		}
		if bt.volume != "" {
			t.VolumeBase, t.Traded = dec(bt.volume), true
		}
		res.Events = append(res.Events, bt.events...)
		t.EndEvent = len(res.Events)
		res.Books = append(res.Books, t)
	}
	return res
}

func ev(kind clob.EventKind, id byte) clob.Event {
	return clob.Event{Kind: kind, OrderID: hashOf(id)}
}

func fillEv(id byte, base, quote, totalBase, totalQuote string, terminal bool) clob.Event {
	return clob.Event{
		Kind: clob.EventFill, OrderID: hashOf(id), Base: dec(base), Quote: dec(quote),
		TotalBase: dec(totalBase), TotalQuote: dec(totalQuote), Terminal: terminal,
	}
}
