package core

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// The orderbook's withdraw (docs/bridge.md §2-§4, "Two paths"): the
// Bridge's call and rules on the orderbook's address, keyed by a withdrawal
// id instead of the transaction hash.

// obWithdrawTx is withdrawTx sent to the orderbook.
func obWithdrawTx(l *Ledger, from, token Address, amount *uint256.Int, deadlineUs uint64) *Tx {
	tx := withdrawTx(l, from, token, amount, deadlineUs)
	tx.To, tx.Hash[0] = OrderbookAddress, 0x0b
	return tx
}

// wantWithdrawalID is the live network's derivation, written out here
// rather than through clob.OrderID: keccak256 of abi.encode(address signer,
// uint64 nonce, uint32 sequence), three 32-byte words, sequence 0.
func wantWithdrawalID(signer Address, nonce uint64) Hash {
	var in [96]byte
	copy(in[12:32], signer[:])
	binary.BigEndian.PutUint64(in[56:64], nonce)
	return Hash(crypto.Keccak256(in[:]))
}

// TestOrderbookWithdraw: through the orderbook a withdrawal is admitted
// like the Bridge's (status 1, no fee whatever its gas, nonce spent,
// nothing debited yet), leaves no envelope behind, and executes in the
// same batch as a Bridge withdrawal; its outcome's id is the derived
// withdrawal id, not its hash, while the Bridge's is its hash. MAX, the
// whole withdrawable balance, executes: no gas is held back.
func TestOrderbookWithdraw(t *testing.T) {
	l := bridgeLedger(t, 0)
	l.Genesis(NativeToken, alice, ether(9990))
	l.Genesis(NativeToken, bob, ether(3))
	if err := l.GenesisMarket(wethMarket()); err != nil {
		t.Fatal(err)
	}
	// An order first: the ledger's envelope holds its intent.
	if _, rej := apply(t, l, orderbookInputs()[0]); !rej.OK() || len(l.LastEnvelope().Intents) != 1 {
		t.Fatalf("order: %+v", rej)
	}
	ob := obWithdrawTx(l, alice, testWETH, ether(2), 1_000_000)
	ob.Gas = 20_000_000 // gas × fee cap above what alice holds free in native
	burned := l.FeesBurned()
	obRec := admit(t, l, ob, 100_000)
	if env := l.LastEnvelope(); len(env.Intents) != 0 || env.Delegated {
		t.Fatalf("an orderbook withdrawal left an envelope: %+v", env)
	}
	if after := l.FeesBurned(); !obRec.EffectiveGasPrice.IsZero() || !after.Eq(&burned) || l.Nonce(alice) != 2 {
		t.Fatalf("price %s, burned %s then %s, nonce %d", obRec.EffectiveGasPrice.Dec(), burned.Dec(), after.Dec(), l.Nonce(alice))
	}
	if w := l.Balance(testWETH, alice); !w.Cash.Eq(ether(5)) || l.PendingWithdrawals() != 1 {
		t.Fatalf("admission debited: WETH %s, %d pending", w.Cash.Dec(), l.PendingWithdrawals())
	}
	bridge := admit(t, l, withdrawTx(l, alice, NativeToken, ether(1), 1_000_000), 200_000)
	max := obWithdrawTx(l, bob, NativeToken, ether(3), 1_000_000) // bob's whole balance
	admit(t, l, max, 300_000)

	apply(t, l, &Input{Kind: InputTick, TimeUs: 500_000})
	out := l.LastWithdrawals()
	if len(out) != 3 {
		t.Fatalf("outcomes %+v", out)
	}
	for i, c := range []struct {
		tx *Tx
		id Hash
	}{{ob, wantWithdrawalID(alice, 1)}, {&bridge.Tx, bridge.Tx.Hash}, {max, wantWithdrawalID(bob, 0)}} {
		if o := out[i]; o.Error != "" || o.TxHash != c.tx.Hash || o.ID != c.id || o.Withdrawer != c.tx.From {
			t.Errorf("outcome %d: %+v, want id %x", i, o, c.id)
		}
	}
	if out[0].ID == out[0].TxHash || out[0].ID != WithdrawalID(alice, 1) {
		t.Fatalf("orderbook withdrawal id %x, hash %x", out[0].ID, out[0].TxHash)
	}
	if w, b := l.Balance(testWETH, alice), l.Balance(NativeToken, bob); !w.Cash.Eq(ether(3)) || !b.Cash.IsZero() {
		t.Fatalf("alice WETH %s, bob native %s", w.Cash.Dec(), b.Cash.Dec())
	}
	if l.Withdrawn(testWETH) != *ether(2) || l.Withdrawn(NativeToken) != *ether(4) {
		t.Fatalf("withdrawn %s / %s", dec(l.Withdrawn(testWETH)), dec(l.Withdrawn(NativeToken)))
	}
	if got := l.LastTick().Landed; !slices.Contains(got, obRec.Seq) {
		t.Fatalf("landed %v, want the orderbook withdrawal's seq %d", got, obRec.Seq)
	}
}

// TestOrderbookWithdrawOutcomes: the batch's refusals carry the id too:
// insufficient_balance and not_included, nothing debited, nonce spent.
func TestOrderbookWithdrawOutcomes(t *testing.T) {
	l := bridgeLedger(t, 1)
	admit(t, l, obWithdrawTx(l, alice, testWETH, ether(1), 500_000), 0)
	admit(t, l, obWithdrawTx(l, bob, testWETH, ether(1), 500_000), 0)   // bob holds nothing; over the cap anyway
	admit(t, l, obWithdrawTx(l, alice, testWETH, ether(9), 500_000), 0) // more than alice holds: over the cap
	apply(t, l, &Input{Kind: InputTick, TimeUs: 500_000})
	out := l.LastWithdrawals()
	want := []struct {
		err string
		id  Hash
	}{{"", wantWithdrawalID(alice, 0)}, {WithdrawNotIncluded, wantWithdrawalID(bob, 0)}, {WithdrawNotIncluded, wantWithdrawalID(alice, 1)}}
	if len(out) != len(want) {
		t.Fatalf("outcomes %+v", out)
	}
	for i, w := range want {
		if out[i].Error != w.err || out[i].ID != w.id {
			t.Errorf("outcome %d: %+v, want error %q id %x", i, out[i], w.err, w.id)
		}
	}

	l = bridgeLedger(t, 0)
	admit(t, l, obWithdrawTx(l, bob, testWETH, ether(1), 500_000), 0)
	apply(t, l, &Input{Kind: InputTick, TimeUs: 500_000})
	if o := l.LastWithdrawals(); len(o) != 1 || o[0].Error != WithdrawInsufficientBalance || o[0].ID != wantWithdrawalID(bob, 0) {
		t.Fatalf("outcome %+v", o)
	}
	if w := l.Withdrawn(testWETH); l.Nonce(bob) != 1 || !w.IsZero() {
		t.Fatalf("nonce %d, withdrawn %s", l.Nonce(bob), dec(l.Withdrawn(testWETH)))
	}
}

// TestOrderbookWithdrawRefusals provokes every refusal through the
// orderbook: RejectApp from the orderbook, the orderbook's own reason where
// its other calls have one for the fault, else the Bridge's text; nothing
// changes (nonce included).
func TestOrderbookWithdrawRefusals(t *testing.T) {
	const now, d = 1_200_000, 2_000_000
	f := func(name, want string, mutate func(l *Ledger, tx *Tx)) {
		t.Helper()
		l := bridgeLedger(t, 0)
		tx := obWithdrawTx(l, alice, NativeToken, ether(1), d)
		mutate(l, tx)
		before, nonce, pending := l.StateHash(), l.Nonce(tx.From), l.PendingWithdrawals()
		rec, rej := l.ApplyTx(tx, now)
		if rec != nil || rej.Code != RejectApp || rej.App != OrderbookAddress || rej.AppReason() != want {
			t.Errorf("%s: got %+v (%q), want orderbook reason %q", name, rej, rej.AppReason(), want)
		}
		if l.StateHash() != before || l.Nonce(tx.From) != nonce || l.PendingWithdrawals() != pending {
			t.Errorf("%s: a refused withdrawal changed the state", name)
		}
	}
	call := withdrawCallEdit
	f("short", clob.ReasonMalformed.String(), func(_ *Ledger, tx *Tx) { tx.Data = tx.Data[:len(tx.Data)-1] })
	f("selector only", clob.ReasonMalformed.String(), func(_ *Ledger, tx *Tx) { tx.Data = tx.Data[:4] })
	f("recipient high byte", clob.ReasonMalformed.String(), func(_ *Ledger, tx *Tx) { tx.Data[4+32+11] = 1 })
	f("value", clob.ReasonValueNonZero.String(), func(_ *Ledger, tx *Tx) { tx.Value.SetUint64(1) })
	f("token", "token not bridged", call(notBridged, bob, ether(1), d))
	f("recipient", "zero recipient", call(NativeToken, Address{}, ether(1), d))
	f("amount", "zero amount", call(NativeToken, bob, new(uint256.Int), d))
	f("native unit", "amount not a whole number of bridged-chain units (multiple of 1000000000000)",
		call(NativeToken, bob, new(uint256.Int).AddUint64(ether(1), 1e11), d))
	f("native min", "amount below minimum 1000000", call(NativeToken, bob, new(uint256.Int).SubUint64(ether(1), 1e12), d))
	f("WBTC max", "amount above maximum 10000000000", call(testWBTC, bob, new(uint256.Int).AddUint64(ether(100), 1e10), d))
	f("deadline +1", "Deadline is not aligned to auction interval", call(NativeToken, bob, ether(1), d+1))
	f("deadline before the admission's batch", "deadline already executed", call(NativeToken, bob, ether(1), 1_000_000))
	f("pending full", "too many pending withdrawals", func(l *Ledger, _ *Tx) { fillPendingWithdrawals(t, l, now, d) })
	// Another orderbook call with the withdraw selector's neighbours is
	// still the orderbook's: an unknown selector is not a withdrawal.
	l := bridgeLedger(t, 0)
	other := obWithdrawTx(l, alice, NativeToken, ether(1), d)
	other.Data[3] ^= 1
	if _, rej := l.ApplyTx(other, now); rej.App != OrderbookAddress || rej.Reason != clob.ReasonUnknownFunction {
		t.Fatalf("another selector: %+v", rej)
	}
	// A far deadline (the live SDK's default is ten years out) is accepted
	// and the withdrawal executes in the next batch.
	far := uint64(now+10*365*24*3600*1_000_000) / 500_000 * 500_000
	admit(t, l, obWithdrawTx(l, alice, NativeToken, ether(1), far), now)
	apply(t, l, &Input{Kind: InputTick, TimeUs: 1_500_000})
	if o := l.LastWithdrawals(); len(o) != 1 || o[0].Error != "" {
		t.Fatalf("far deadline: %+v", o)
	}
}

// TestOrderbookWithdrawWaitsForTick: while a tick clears, an orderbook
// withdrawal is not staged (it would land in that tick): RejectWaitTick,
// nothing changed; applied after the tick it is admitted.
func TestOrderbookWithdrawWaitsForTick(t *testing.T) {
	l := bridgeLedger(t, 0)
	tx := obWithdrawTx(l, alice, NativeToken, ether(1), 1_000_000)
	before := l.StateHash()
	if rec, rej := l.Apply(&Input{Kind: InputTx, Tx: *tx, TimeUs: 100_000, Staged: true}); rec != nil || rej.Code != RejectWaitTick {
		t.Fatalf("staged: %+v", rej)
	}
	if l.StateHash() != before {
		t.Fatal("a staged withdrawal changed the state")
	}
	admit(t, l, tx, 100_000)
}

// TestOrderbookWithdrawSnapshot: a pending orderbook withdrawal keeps its
// id through a snapshot (the count's top bit set, each entry 32 bytes
// longer); the loaded ledger runs the batch as the original and a replay
// do. Without one the snapshot is the earlier builds' bytes (no flag, no
// ids), and ids with none differing from its hash do not load.
func TestOrderbookWithdrawSnapshot(t *testing.T) {
	cfg := Config{ChainID: testChainID, BaseFee: *gwei, Bridge: testBridge()}
	genesis := func() *Ledger {
		l := NewLedger(cfg)
		l.Genesis(NativeToken, alice, ether(10))
		return l
	}
	l := genesis()
	bridge := withdrawTx(l, alice, NativeToken, ether(1), 1_000_000)
	admit(t, l, bridge, 100_000)
	plain := l.AppendSnapshot(nil)
	at := bytes.LastIndex(plain, bridge.Hash[:]) // after the account's newest
	if at < 4 || binary.BigEndian.Uint32(plain[at-4:]) != 1 || bytes.Equal(plain[at+pendingWithdrawalSize:][:32], bridge.Hash[:]) {
		t.Fatalf("a Bridge-only snapshot is not the earlier layout (count %x)", plain[at-4:at])
	}
	ob := obWithdrawTx(l, alice, NativeToken, ether(2), 1_000_000)
	admit(t, l, ob, 200_000)
	snap := l.AppendSnapshot(nil)
	if !bytes.Equal(snap[at:at+32], bridge.Hash[:]) || binary.BigEndian.Uint32(snap[at-4:]) != 2|pendingIDsFlag {
		t.Fatalf("count %x, want 2 with the ids flag", snap[at-4:at])
	}
	loaded, err := LoadSnapshot(cfg, snap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(loaded.AppendSnapshot(nil), snap) {
		t.Fatal("a loaded snapshot re-snapshots to other bytes")
	}
	replay := genesis()
	admit(t, replay, withdrawTx(replay, alice, NativeToken, ether(1), 1_000_000), 100_000)
	admit(t, replay, obWithdrawTx(replay, alice, NativeToken, ether(2), 1_000_000), 200_000)
	for _, x := range []*Ledger{l, loaded, replay} {
		apply(t, x, &Input{Kind: InputTick, TimeUs: 500_000})
	}
	o := l.LastWithdrawals()
	if len(o) != 2 || o[0].ID != bridge.Hash || o[1].ID != wantWithdrawalID(alice, 1) ||
		!slices.Equal(o, loaded.LastWithdrawals()) || !slices.Equal(o, replay.LastWithdrawals()) || l.StateHash() != loaded.StateHash() {
		t.Fatalf("outcomes %+v\nloaded %+v\nreplayed %+v", o, loaded.LastWithdrawals(), replay.LastWithdrawals())
	}

	// The orderbook one's id set to its hash: ids flagged, none needed.
	bad := bytes.Clone(snap)
	idAt := at + 2*pendingWithdrawalSize + 32
	copy(bad[idAt:], ob.Hash[:])
	if _, err := LoadSnapshot(cfg, bad); err == nil || !strings.Contains(err.Error(), "ids") {
		t.Fatalf("flagged ids all equal to their hashes: %v", err)
	}
	// The flag without the ids: the entries run short.
	bad = bytes.Clone(plain)
	binary.BigEndian.PutUint32(bad[at-4:], 1|pendingIDsFlag)
	if _, err := LoadSnapshot(cfg, bad); err == nil {
		t.Fatal("loaded a flagged count without ids")
	}
}
