package subs

import (
	"testing"

	"github.com/valyala/fastjson"
)

// FuzzSubscribe feeds arbitrary subscription types and params to a hub
// that has published ticks: it must never panic, and every error must be
// a JSON-RPC error with a code. The input comes in two halves: the type,
// then the params JSON.
func FuzzSubscribe(f *testing.F) {
	seeds := [][2]string{
		{"svc_orderbook", `{"orderbook_ids":["0x0000000000000000000000000000000000000000000000000000000000000001"],"depth":5,"since":1}`},
		{"svc_orders_v2", `{"bidders":["0x1111111111111111111111111111111111111111"],"since":2000,"since_book":"0x0000000000000000000000000000000000000000000000000000000000000001"}`},
		{"svc_orders", `{"bidder":"0x1111111111111111111111111111111111111111"}`},
		{"svc_positions", `{"account":"0x1111111111111111111111111111111111111111"}`},
		{"logs", `{"address":["0x1111111111111111111111111111111111111111"],"topics":[null,["0x0000000000000000000000000000000000000000000000000000000000000001"]],"fromBlock":"latest","minAttestations":2}`},
		{"svc_accountReceipts", `{"address":"0x1111111111111111111111111111111111111111","since":3}`},
		{"svc_pastPerfectTime", `12345`},
		{"svc_markets", `{"clob_ids":[]}`},
		{"newHeads", ``},
		{"svc_transfers", `{"account":"0x11","since":"0x"}`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	h := New(Config{ReplayTicks: 128})
	for i := int64(1); i <= 4; i++ {
		h.PublishTick(newTick(i*1000).book(bookID(1), true, nil).t)
	}
	h.Pump()
	c := &fakeConn{}
	var p fastjson.Parser
	f.Fuzz(func(t *testing.T, typ, params string) {
		var v *fastjson.Value
		if params != "" {
			var err error
			if v, err = p.Parse(params); err != nil {
				return
			}
		}
		id, err := h.Subscribe(c, []byte(typ), v)
		if err != nil {
			if err.Code == 0 || err.Message == "" {
				t.Fatalf("error without code or message: %+v", err)
			}
			return
		}
		h.Activate(c, id)
		if !h.Unsubscribe(c, id) {
			t.Fatalf("cannot unsubscribe %s", id)
		}
	})
}
