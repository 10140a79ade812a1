package marketdata

import (
	"strings"
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

// armedMeta is alice's trigger id on bookP, admitted at tsUs.
func armedMeta(id byte, tsUs int64, typ, grouping uint8) *OrderMeta {
	m := meta(id, bookP, alice, uint64(id), tsUs, clob.Sell)
	m.Signer = bob // a delegate's trigger: the id keys on the signer
	m.Kind, m.TriggerType, m.Grouping, m.TTLUs = KindTriggered, typ, grouping, 5_000_000
	return m
}

// triggeredState has three of alice's triggers: one fired and its order
// landed and traded, one cancelled, one still armed.
// The engine (live) answers Order for the orders fired triggers became.
func triggeredState() (*Index, fakeLive) {
	live := fakeLive{}
	x := New(live)
	x.AddMarket(marketA())
	x.AddMarket(marketPH())
	x.AdmittedTrigger(armedMeta(0x41, 100, clob.TriggerStopLoss, 0))
	x.AdmittedTrigger(armedMeta(0x42, 200, clob.TriggerTakeProfit, clob.GroupingAsset))
	x.AdmittedTrigger(armedMeta(0x43, 300, clob.TriggerTakeProfit, clob.GroupingAsset))
	live[hashOf(0x41)] = clob.OrderInfo{ID: hashOf(0x41), Book: bookP, Owner: alice, Side: clob.Sell,
		Type: clob.Market, Flags: clob.FlagIOC, Price: dec("2700" + e18[1:]), Size: dec("2" + e18[1:]),
		Pending: true, DeadlineUs: 2_000_000}
	res := mkTick(1_500_000, bookTick{book: bookP})
	res.Events = append(res.Events, clob.Event{Kind: clob.EventTriggerFired, Book: bookP, OrderID: hashOf(0x41), Owner: alice},
		clob.Event{Kind: clob.EventTriggerCancel, Book: bookP, OrderID: hashOf(0x42), Owner: alice})
	x.Tick(res)
	x.Tick(mkTick(2_000_000, bookTick{book: bookP, price: "3000", volume: "1", events: []clob.Event{
		ev(clob.EventPlaced, 0x41), fillEv(0x41, "1", "3000", "1", "3000", false), ev(clob.EventCancel, 0x41),
	}}))
	return x, live
}

// A fired trigger's order is known to the index from the tick that fired
// it, with the trigger's id, owner, signer and nonce, no transaction (the
// openapi: tx_hash is zero for engine-generated orders), and the terms the
// engine gave it; a cancelled trigger leaves nothing behind.
func TestFiredTriggerBecomesOrder(t *testing.T) {
	x, _ := triggeredState()
	o, ok := x.Order(hashOf(0x41))
	if !ok {
		t.Fatal("the fired trigger's order is unknown")
	}
	m := &o.Meta
	if m.Kind != KindTriggered || m.TriggerType != clob.TriggerStopLoss || m.Owner != alice || m.Signer != bob ||
		m.TxHash != (clob.Hash{}) || m.Nonce != 0x41 || m.Type != clob.Market || m.Flags != clob.FlagIOC ||
		m.AdmittedUs != 1_500_000 || m.TTLUs != 0 || m.DeadlineUs != 2_000_000 || o.Status != StatusCanceled || o.EnteredUs != 2_000_000 {
		t.Fatalf("fired order %+v status %v", m, o.Status)
	}
	if _, ok := x.Order(hashOf(0x42)); ok {
		t.Fatal("a cancelled trigger became an order")
	}
	if _, ok := x.armed[hashOf(0x42)]; ok || len(x.armed) != 1 {
		t.Fatalf("armed %v, want only 0x43", x.armed)
	}
	if m.Grouping != clob.GroupingNone {
		t.Fatalf("ungrouped trigger's order has grouping %d", m.Grouping)
	}
	page := x.Orders(nil, alice, &OrdersQuery{Limit: OrdersLimitMax})
	if len(page.Orders) != 1 || page.Orders[0].Meta.ID != hashOf(0x41) {
		t.Fatalf("ob_getOrders lists %d orders", len(page.Orders))
	}
}

// The armed triggers and the triggered orders survive a snapshot, and the
// armed one still fires after a load.
func TestTriggeredSnapshot(t *testing.T) {
	x, live := triggeredState()
	snap := checkRoundTrip(t, x)
	y, err := Load(live, snap)
	if err != nil {
		t.Fatal(err)
	}
	live[hashOf(0x43)] = clob.OrderInfo{ID: hashOf(0x43), Book: bookP, Owner: alice, Side: clob.Sell, Type: clob.Limit,
		Price: dec("3100" + e18[1:]), Size: dec(e18), Pending: true, DeadlineUs: 3_000_000}
	res := mkTick(2_500_000, bookTick{book: bookP})
	res.Events = append(res.Events, clob.Event{Kind: clob.EventTriggerFired, Book: bookP, OrderID: hashOf(0x43), Owner: alice})
	y.Tick(res)
	if o, ok := y.Order(hashOf(0x43)); !ok || o.Meta.Kind != KindTriggered || o.Meta.TriggerType != clob.TriggerTakeProfit || o.Status != StatusPending {
		t.Fatalf("the armed trigger loaded did not become an order: %v", ok)
	}
	if m := o43(y).Meta; m.TriggerType != clob.TriggerTakeProfit || m.Grouping != clob.GroupingAsset {
		t.Fatalf("grouped fired order %+v", m)
	}
	checkRoundTrip(t, y)
}

func o43(x *Index) *Order {
	o, _ := x.Order(hashOf(0x43))
	return o
}

// A fired trigger's order has no transaction: ob_getOrders lists it with a
// zero tx_hash (the openapi: "Zero for engine-generated orders (liquidations,
// fired-trigger synthetics)"), whatever hash the admitted trigger came
// with; a snapshot holding one with a hash, armed or listed, is refused.
func TestTriggeredOrderTxZero(t *testing.T) {
	x, _ := triggeredState()
	o, ok := x.Order(hashOf(0x41))
	if !ok || o.Meta.TxHash != (clob.Hash{}) {
		t.Fatalf("fired order %v: tx %x", ok, o.Meta.TxHash)
	}
	page := x.Orders(nil, alice, &OrdersQuery{Limit: OrdersLimitMax})
	if len(page.Orders) != 1 || page.Orders[0].Meta.Kind != KindTriggered || page.Orders[0].Meta.TxHash != (clob.Hash{}) {
		t.Fatalf("ob_getOrders lists %d orders, the first %+v", len(page.Orders), page.Orders[0].Meta)
	}
	for _, where := range []string{"order", "armed"} {
		x, live := triggeredState()
		if where == "order" {
			o, _ := x.Order(hashOf(0x41))
			o.Meta.TxHash = hashOf(0xc1)
		} else {
			m := x.armed[hashOf(0x43)]
			m.TxHash = hashOf(0xc3)
			x.armed[hashOf(0x43)] = m
		}
		if _, err := Load(live, x.AppendSnapshot(nil)); err == nil || !strings.Contains(err.Error(), "a triggered order with a transaction hash") {
			t.Fatalf("%s with a tx hash: %v", where, err)
		}
	}
}
