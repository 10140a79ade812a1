package node

import (
	"testing"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
)

// perpViews keeps a trigger submit's tx hash while it may be stored,
// marks its owner (and a cancel's, a delegated intent's master) touched
// when the book's tick lands them, and forgets the hash of a trigger that
// fired or was cancelled, or that its landing did not store.
func TestPerpViewsTriggers(t *testing.T) {
	eng := core.NewLedger(core.Config{ChainID: 1}).Orderbook() // stores no trigger yet
	v := newPerpViews()
	book, other := clob.Hash{31: 7}, clob.Hash{31: 8}
	signer, master := core.Address{19: 1}, clob.Address{19: 2}
	tx := &core.Tx{From: signer, Nonce: 5, Hash: core.Hash{0: 0xab}}
	v.admitted(tx, &clob.Envelope{Intents: []clob.Intent{
		{Kind: clob.IntentSubmit, Book: book},
		{Kind: clob.IntentSubmitTrigger, Book: book},
		{Kind: clob.IntentCancelTrigger, Book: other},
	}})
	id := clob.OrderID(clob.Address(signer), 5, 1)
	if v.trigTx[id] != clob.Hash(tx.Hash) || len(v.trigTx) != 1 {
		t.Fatalf("trigTx %v", v.trigTx)
	}
	v.admitted(&core.Tx{From: signer, Nonce: 6}, &clob.Envelope{Delegated: true, Master: master,
		Intents: []clob.Intent{{Kind: clob.IntentUpdateTrigger, Book: other}}})
	// A tick of the other book lands the cancel and the update: both
	// owners touched, the submit still waits.
	fired := clob.Hash{31: 0x99}
	v.trigTx[fired] = clob.Hash{1: 1}
	v.tick(&clob.TickResult{Books: []clob.BookTick{{Book: other}},
		Events: []clob.Event{{Kind: clob.EventTriggerFired, OrderID: fired, Owner: clob.Address{19: 3}}}}, eng)
	if len(v.trigTouched) != 3 || !v.trigTouched[clob.Address(signer)] || !v.trigTouched[master] || !v.trigTouched[clob.Address{19: 3}] {
		t.Fatalf("touched %v", v.trigTouched)
	}
	if _, ok := v.trigTx[fired]; ok || v.trigTx[id] != clob.Hash(tx.Hash) || len(v.trigLanding) != 1 {
		t.Fatalf("after the other book: trigTx %v landing %v", v.trigTx, v.trigLanding)
	}
	// The book's tick lands the submit, which the engine did not store.
	v.tick(&clob.TickResult{Books: []clob.BookTick{{Book: book}}}, eng)
	if len(v.trigTouched) != 1 || !v.trigTouched[clob.Address(signer)] || len(v.trigTx) != 0 || len(v.trigLanding) != 0 {
		t.Fatalf("after the book: touched %v trigTx %v landing %v", v.trigTouched, v.trigTx, v.trigLanding)
	}
}
