package rpc_test

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// TestOrderbookUpdateTokenInformational: update's token argument is
// informational (the live rule; the SDK passes the quote token for every
// order). A resting WETH sell updated with the quote token, the base token
// and the zero address is admitted each time, locks WETH for its new size
// and no native, and rests at the new size after the tick.
func TestOrderbookUpdateTokenInformational(t *testing.T) {
	tn := startNode(t)
	s := tn.sender(t, 2)
	s.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(5000), 0, 0, 0))
	id := orderID(s.addr(), 0, 0)
	tn.tick(t)
	locked := func(token common.Address) *big.Int {
		t.Helper()
		return new(big.Int).Sub(callView(t, tn, "balanceOf", token, s.addr()), callView(t, tn, "withdrawableBalance", token, s.addr()))
	}
	for i, token := range []common.Address{native, weth, {}} {
		size := eth(int64(i + 2))
		if _, err := s.send(t, pack(t, "update", wethBook, id, size, eth(5000), token, tn.nextDeadline())); err != nil {
			t.Fatalf("update with token %s: %v (%v)", token, err, errorData(err))
		}
		if w, n := locked(weth), locked(native); w.Cmp(size) != 0 || n.Sign() != 0 {
			t.Fatalf("update with token %s: locked WETH %v native %v, want WETH %v", token, w, n, size)
		}
		tn.tick(t)
		var book struct {
			Sells map[string]struct{ Volume hexutil.Big } `json:"sells"`
		}
		if err := json.Unmarshal(tn.rawCall("ob_getOrderbook", wethBook, 10), &book); err != nil {
			t.Fatal(err)
		}
		if lv := book.Sells[eth(5000).String()]; len(book.Sells) != 1 || lv.Volume.ToInt().Cmp(size) != 0 {
			t.Fatalf("update with token %s: sells %s", token, tn.rawCall("ob_getOrderbook", wethBook, 10))
		}
	}
}
