package persist

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/binread"
)

func testRow(i byte, tickUs int64, pos uint32, who byte, errStr string) WithdrawalRow {
	return WithdrawalRow{Pos: pos, Out: core.WithdrawalOutcome{TxHash: core.Hash{0xdd, i}, Seq: uint64(i), Withdrawer: core.Address{who},
		To: core.Address{0x70, i}, Token: core.NativeToken, Amount: *uint256.NewInt(uint64(i) << 40), Error: errStr, TickUs: tickUs}}
}

func hashes(rows []WithdrawalRow) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteByte('0' + r.Out.TxHash[1])
	}
	return b.String()
}

// TestWithdrawalRows: rows read back exactly, in (tick, position) order
// from any cursor, per account; executed rows are pending until a claim
// settles them, with or without a proof.
func TestWithdrawalRows(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rows := []WithdrawalRow{testRow(1, 500, 0, 1, ""), testRow(2, 500, 1, 2, core.WithdrawNotIncluded), testRow(3, 500, 2, 1, ""),
		testRow(4, 1000, 0, 2, ""), testRow(5, 1000, 1, 1, "")}
	if err := l.Append(&Group{Withdrawals: rows}); err != nil {
		t.Fatal(err)
	}
	all, err := l.Withdrawals(nil, nil, WithdrawalCursor{}, 100)
	if err != nil || len(all) != 5 {
		t.Fatalf("%v %v", all, err)
	}
	for i := range all {
		if all[i] != rows[i] {
			t.Fatalf("row %d read back %+v, want %+v", i, all[i], rows[i])
		}
	}
	for _, c := range []struct {
		who    byte
		from   WithdrawalCursor
		limit  int
		want   string
		reason string
	}{
		{0, WithdrawalCursor{500, 2}, 2, "34", "from inside a batch, a limit"},
		{0, WithdrawalCursor{501, 0}, 100, "45", "after a batch"},
		{1, WithdrawalCursor{}, 100, "135", "one account"},
		{2, WithdrawalCursor{500, 2}, 100, "4", "one account from inside a batch"},
		{3, WithdrawalCursor{}, 100, "", "an account without rows"},
	} {
		var acc *core.Address
		if c.who != 0 {
			acc = &core.Address{c.who}
		}
		got, err := l.Withdrawals(nil, acc, c.from, c.limit)
		if err != nil || hashes(got) != c.want {
			t.Fatalf("%s: %s (%v), want %s", c.reason, hashes(got), err, c.want)
		}
	}
	pending, err := l.PendingClaims(nil, 100)
	if err != nil || hashes(pending) != "1345" {
		t.Fatalf("pending %s (%v)", hashes(pending), err)
	}
	if r, c, found, err := l.Withdrawal(core.Hash{0xdd, 3}); !found || err != nil || c != nil || r != rows[2] {
		t.Fatalf("row 3: %+v %+v %v %v", r, c, found, err)
	}
	proof := []byte{0, 1, 2, 3}
	claims := []Claim{{TxHash: core.Hash{0xdd, 3}, TickUs: 500, Pos: 2, ClaimHash: core.Hash{0xcc}, Proof: proof},
		{TxHash: core.Hash{0xdd, 4}, TickUs: 1000, Pos: 0}} // settled without a proof
	if err := l.Append(&Group{Claims: claims}); err != nil {
		t.Fatal(err)
	}
	if pending, err = l.PendingClaims(nil, 1); err != nil || hashes(pending) != "1" {
		t.Fatalf("pending after the claims, limit 1: %s (%v)", hashes(pending), err)
	}
	if pending, err = l.PendingClaims(nil, 100); err != nil || hashes(pending) != "15" {
		t.Fatalf("pending after the claims: %s (%v)", hashes(pending), err)
	}
	if _, c, found, err := l.Withdrawal(core.Hash{0xdd, 3}); !found || err != nil || c == nil || !bytes.Equal(c.Proof, proof) || c.ClaimHash != (core.Hash{0xcc}) {
		t.Fatalf("claim of row 3: %+v %v %v", c, found, err)
	}
	if _, c, found, err := l.Withdrawal(core.Hash{0xdd, 4}); !found || err != nil || c != nil {
		t.Fatalf("row 4 settled without a proof: %+v %v %v", c, found, err)
	}
	if _, _, found, err := l.Withdrawal(core.Hash{0xdd, 9}); found || err != nil {
		t.Fatalf("unknown hash: %v %v", found, err)
	}
}

// TestWithdrawalRowCorrupt: a row that does not decode exactly is an
// error, not a guess.
func TestWithdrawalRowCorrupt(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := testRow(1, 500, 0, 1, "")
	if err := l.Append(&Group{Withdrawals: []WithdrawalRow{r}}); err != nil {
		t.Fatal(err)
	}
	key := wdPlaceKey(wdRow, 500, 0)
	err = l.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		return txn.Set(key, append(v, 0))
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := l.Withdrawal(r.Out.TxHash); err == nil {
		t.Fatal("a row with a trailing byte read back")
	}
	if _, err := l.Withdrawals(nil, nil, WithdrawalCursor{}, 10); err == nil {
		t.Fatal("a listing over a corrupt row succeeded")
	}
}

// TestWithdrawalErrMax: an outcome error longer than WithdrawalErrMax is a
// bug of the caller, refused before anything is written.
func TestWithdrawalErrMax(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ok := testRow(1, 500, 0, 1, strings.Repeat("e", WithdrawalErrMax))
	if err := l.Append(&Group{Withdrawals: []WithdrawalRow{ok}}); err != nil {
		t.Fatal(err)
	}
	if r, _, _, err := l.Withdrawal(ok.Out.TxHash); err != nil || r != ok {
		t.Fatalf("longest error read back %q (%v)", r.Out.Error, err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an error of WithdrawalErrMax+1 bytes was stored")
		}
	}()
	l.Append(&Group{Withdrawals: []WithdrawalRow{testRow(2, 500, 1, 1, strings.Repeat("e", WithdrawalErrMax+1))}})
}

// TestWithdrawalIDs: a row whose withdrawal id is not its tx hash (an
// orderbook withdrawal) reads back with it and is found by either, its
// claim (keyed by the tx hash) too; a Bridge row's id is its hash, stored
// as the earlier layout; a value written by an earlier build (no id)
// reads with its hash as id; an id equal to the hash stored anyway is
// corruption.
func TestWithdrawalIDs(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ob := testRow(1, 500, 0, 1, "")
	ob.Out.ID = core.Hash{0x1d, 1}
	bridge := testRow(2, 500, 1, 2, "")
	bridge.Out.ID = bridge.Out.TxHash
	if err := l.Append(&Group{Withdrawals: []WithdrawalRow{ob, bridge}}); err != nil {
		t.Fatal(err)
	}
	raw := func(r WithdrawalRow) []byte {
		t.Helper()
		var v []byte
		err := l.db.View(func(txn *badger.Txn) error {
			var err error
			v, err = getValue(txn, wdPlaceKey(wdRow, r.Out.TickUs, r.Pos))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if obRaw, bridgeRaw := raw(ob), raw(bridge); len(obRaw) != len(bridgeRaw)+32 || !bytes.HasSuffix(obRaw, ob.Out.ID[:]) {
		t.Fatalf("values %x / %x: want the id after the orderbook row's error only", obRaw, bridgeRaw)
	}
	for _, h := range []core.Hash{ob.Out.TxHash, ob.Out.ID} {
		if r, c, found, err := l.Withdrawal(h); !found || err != nil || c != nil || r != ob {
			t.Fatalf("by %x: %+v %v %v %v", h, r, c, found, err)
		}
	}
	if r, _, found, err := l.Withdrawal(bridge.Out.TxHash); !found || err != nil || r != bridge {
		t.Fatalf("bridge row: %+v %v %v", r, found, err)
	}
	claim := Claim{TxHash: ob.Out.TxHash, TickUs: 500, Pos: 0, ClaimHash: core.Hash{0xcc}, Proof: []byte{0, 9}}
	if err := l.Append(&Group{Claims: []Claim{claim}}); err != nil {
		t.Fatal(err)
	}
	if _, c, found, err := l.Withdrawal(ob.Out.ID); !found || err != nil || c == nil || c.TxHash != ob.Out.TxHash || c.ClaimHash != claim.ClaimHash {
		t.Fatalf("claim by id: %+v %v %v", c, found, err)
	}
	all, err := l.Withdrawals(nil, nil, WithdrawalCursor{}, 10)
	if err != nil || len(all) != 2 || all[0] != ob || all[1] != bridge {
		t.Fatalf("listing %+v (%v)", all, err)
	}

	// An earlier build's row, in its layout: the value ends at the error,
	// and there is no 'i' key.
	old := testRow(3, 1000, 0, 1, core.WithdrawInsufficientBalance)
	o := &old.Out
	v := binary.BigEndian.AppendUint64(append([]byte(nil), o.TxHash[:]...), o.Seq)
	v = append(append(append(v, o.Withdrawer[:]...), o.To[:]...), o.Token[:]...)
	v = binread.AppendU256Compact(v, &o.Amount)
	v = append(append(v, byte(len(o.Error))), o.Error...)
	err = l.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set(wdPlaceKey(wdRow, 1000, 0), v); err != nil {
			return err
		}
		return txn.Set(wdHashKey(wdHash, old.Out.TxHash), wdPlace(nil, 1000, 0))
	})
	if err != nil {
		t.Fatal(err)
	}
	old.Out.ID = old.Out.TxHash
	if r, _, found, err := l.Withdrawal(old.Out.TxHash); !found || err != nil || r != old {
		t.Fatalf("earlier build's row: %+v %v %v", r, found, err)
	}

	// The id stored although it is the hash: not the canonical layout.
	err = l.db.Update(func(txn *badger.Txn) error {
		return txn.Set(wdPlaceKey(wdRow, 500, 1), append(raw(bridge), bridge.Out.TxHash[:]...))
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := l.Withdrawal(bridge.Out.TxHash); err == nil {
		t.Fatal("a row storing its hash as its id read back")
	}
}
