package marketdata

import (
	"strings"
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

// firedLive answers Order for the orders fired triggers became.
type firedLive struct {
	perpLive
	orders map[clob.Hash]clob.OrderInfo
}

func (l *firedLive) Order(id clob.Hash) (clob.OrderInfo, bool) {
	o, ok := l.orders[id]
	return o, ok
}

// armedMeta is alice's trigger id on bookP, admitted at tsUs.
func armedMeta(id byte, tsUs int64, typ, grouping uint8) *OrderMeta {
	m := meta(id, bookP, alice, uint64(id), tsUs, clob.Sell)
	m.Signer = bob // a delegate's trigger: the id keys on the signer
	m.Kind, m.TriggerType, m.Grouping, m.TTLUs = KindTriggered, typ, grouping, 5_000_000
	return m
}

// triggeredState has three of alice's triggers: one fired and its order
// landed and traded, one cancelled, one still armed.
func triggeredState() (*Index, *firedLive) {
	live := &firedLive{orders: map[clob.Hash]clob.OrderInfo{}}
	live.cfg = *marketP()
	x := New(live)
	x.AddMarket(marketA())
	x.AddMarket(marketP())
	x.AdmittedTrigger(armedMeta(0x41, 100, clob.TriggerStopLoss, 0))
	x.AdmittedTrigger(armedMeta(0x42, 200, clob.TriggerTakeProfit, clob.GroupingAsset))
	x.AdmittedTrigger(armedMeta(0x43, 300, clob.TriggerTakeProfit, clob.GroupingAsset))
	live.orders[hashOf(0x41)] = clob.OrderInfo{ID: hashOf(0x41), Book: bookP, Owner: alice, Side: clob.Sell,
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
	js := string(AppendOrder(nil, o, false))
	for _, want := range []string{`"kind":"triggered"`, `"tx_hash":"0x` + strings.Repeat("00", 32) + `"`, `"nonce":65`, `"trigger_type":"stop_loss"`} {
		if !strings.Contains(js, want) {
			t.Fatalf("order JSON %s lacks %s", js, want)
		}
	}
	if strings.Contains(js, `"grouping"`) {
		t.Fatalf("ungrouped order JSON %s has grouping", js)
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
	live.orders[hashOf(0x43)] = clob.OrderInfo{ID: hashOf(0x43), Book: bookP, Owner: alice, Side: clob.Sell, Type: clob.Limit,
		Price: dec("3100" + e18[1:]), Size: dec(e18), Pending: true, DeadlineUs: 3_000_000}
	res := mkTick(2_500_000, bookTick{book: bookP})
	res.Events = append(res.Events, clob.Event{Kind: clob.EventTriggerFired, Book: bookP, OrderID: hashOf(0x43), Owner: alice})
	y.Tick(res)
	if o, ok := y.Order(hashOf(0x43)); !ok || o.Meta.Kind != KindTriggered || o.Meta.TriggerType != clob.TriggerTakeProfit || o.Status != StatusPending {
		t.Fatalf("the armed trigger loaded did not become an order: %v", ok)
	}
	if js := string(AppendOrder(nil, o43(y), false)); !strings.Contains(js, `"trigger_type":"take_profit","grouping":"asset"}`) {
		t.Fatalf("grouped fired order %s", js)
	}
	checkRoundTrip(t, y)
}

func o43(x *Index) *Order {
	o, _ := x.Order(hashOf(0x43))
	return o
}
