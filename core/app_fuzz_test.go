package core

import (
	"testing"

	"github.com/holiman/uint256"
)

// FuzzAppCalls sends fuzzed call data and value to the Bridge and to the
// Recovery application, from an open account and from a locked one: the
// ledger never panics, a refusal is the application's (or a protocol
// reason) and changes nothing, and conservation holds after every input.
func FuzzAppCalls(f *testing.F) {
	f.Add(AppendWithdrawCall(nil, NativeToken, Address{0xca}, ether(1), 2_000_000), uint64(0), false, false)
	f.Add(AppendWithdrawCall(nil, testWETH, Address{}, uint256.NewInt(1), 1), uint64(1), false, false)
	f.Add(recoverCall(TxRef{Hash: Hash{1}, Nonce: 0}), uint64(0), true, true)
	f.Add([]byte{0xde, 0xad}, uint64(0), true, false)
	f.Fuzz(func(t *testing.T, data []byte, value uint64, toRecovery, locked bool) {
		l := bridgeLedger(t, 2)
		first := withdrawTx(l, alice, NativeToken, ether(1), 2_000_000)
		rec, rej := l.ApplyTx(first, 1_000_000)
		if !rej.OK() {
			t.Fatalf("the seed withdrawal was refused: %+v", rej)
		}
		l.Settle(rec)
		if locked {
			if rec, rej := l.Apply(&Input{Kind: InputLockAccount, To: alice}); rec != nil || !rej.OK() {
				t.Fatalf("lock: %+v", rej)
			}
		}
		tx := withdrawTx(l, alice, NativeToken, ether(1), 2_000_000)
		tx.Data, tx.Value = data, *uint256.NewInt(value)
		if toRecovery {
			tx.To = RecoveryAddress
		}
		before := l.StateHash()
		rec, rej = l.ApplyTx(tx, 1_200_000)
		switch {
		case rej.OK() && rec == nil:
			t.Fatal("accepted without a record")
		case !rej.OK() && l.StateHash() != before:
			t.Fatalf("refusal %+v changed the state", rej)
		case rej.Code == RejectApp && rej.App != tx.To:
			t.Fatalf("refused by %x for a call to %x", rej.App, tx.To)
		}
		if rec != nil {
			l.Settle(rec)
		}
		l.Tick(2_000_000) // the withdrawal batch executes whatever was admitted
		if !l.CheckSupply() {
			t.Fatal("conservation broken")
		}
	})
}
