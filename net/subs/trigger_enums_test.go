package subs

import (
	"strings"
	"testing"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

// DecodeTick takes exactly the trigger types and groupings the engine
// takes (clob.TriggerTakeProfit, clob.TriggerStopLoss; clob.GroupingNone,
// clob.GroupingAsset), named by value, in a stored trigger and in a
// triggered order's meta alike; and a triggered order carries no
// transaction hash (it is engine-made). Before, a stored trigger's
// grouping was any byte, and the type check was "the larger constant".
func TestDecodeTickTriggerEnums(t *testing.T) {
	encode := func(typ, grouping uint8, metaTyp, metaGrouping uint8, metaTx clob.Hash) []byte {
		m := marketdata.OrderMeta{ID: orderID(9), Book: perpBook, Owner: addr(1), Signer: addr(1), TxHash: metaTx, Nonce: 9,
			Side: clob.Sell, Type: clob.Market, Price: w(1900), Size: w(1), DeadlineUs: 1_000_000, AdmittedUs: 1000,
			Kind: marketdata.KindTriggered, TriggerType: metaTyp, Grouping: metaGrouping}
		tk := newTick(1000).book(perpBook, false, []marketdata.OrderMeta{m}).t
		tr := testTrigger(3, addr(1), clob.Sell, typ)
		tr.Info.Grouping = grouping
		tk.Triggers = []tickrec.AccountTriggers{{Account: addr(1), Triggers: []marketdata.Trigger{tr}}}
		return tickrec.AppendTick(nil, tk)
	}
	f := func(name, wantErr string, b []byte) {
		t.Helper()
		got, err := tickrec.DecodeTick(b)
		if wantErr == "" {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if tr := got.Triggers[0].Triggers[0].Info; !marketdata.ValidTriggerType(tr.TriggerType) || !marketdata.ValidGrouping(tr.Grouping) {
				t.Fatalf("%s: decoded %+v", name, tr)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%s: err %v, want %q", name, err, wantErr)
		}
	}
	var zero clob.Hash
	for _, typ := range []uint8{clob.TriggerTakeProfit, clob.TriggerStopLoss} {
		for _, g := range []uint8{clob.GroupingNone, clob.GroupingAsset} {
			f("valid", "", encode(typ, g, typ, g, zero))
		}
	}
	f("trigger type 2", "unknown trigger type 2", encode(2, clob.GroupingNone, clob.TriggerStopLoss, clob.GroupingNone, zero))
	f("trigger grouping 2", "unknown trigger grouping 2", encode(clob.TriggerStopLoss, 2, clob.TriggerStopLoss, clob.GroupingNone, zero))
	f("trigger grouping 255", "unknown trigger grouping 255", encode(clob.TriggerStopLoss, 255, clob.TriggerStopLoss, clob.GroupingNone, zero))
	f("meta type 2", "unknown trigger type 2", encode(clob.TriggerStopLoss, clob.GroupingNone, 2, clob.GroupingNone, zero))
	f("meta grouping 2", "unknown trigger grouping 2", encode(clob.TriggerStopLoss, clob.GroupingNone, clob.TriggerStopLoss, 2, zero))
	f("meta tx", "with a transaction hash", encode(clob.TriggerStopLoss, clob.GroupingNone, clob.TriggerStopLoss, clob.GroupingAsset, txHash(9)))
}
