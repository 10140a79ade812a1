package core

import (
	"testing"

	"github.com/holiman/uint256"
)

// mintData encodes mint(to, entries, depositToClob) in the canonical ABI
// layout: selector | to | offset 0x60 | depositToClob | n | (token | amount)×n.
// The wire test (net/rpc/mint_e2e_test.go) encodes with go-ethereum's abi.
func mintData(t *testing.T, to Address, clob bool, entries ...MintEntry) []byte {
	t.Helper()
	word := func(dst []byte, b []byte) []byte { return append(append(dst, make([]byte, 32-len(b))...), b...) }
	d := word(append([]byte(nil), mintSelector[:]...), to[:])
	d = word(d, []byte{0x60})
	d = word(d, []byte{0})
	if clob {
		d[len(d)-1] = 1
	}
	d = word(d, []byte{byte(len(entries))})
	for _, e := range entries {
		amount := e.Amount.Bytes32()
		d = append(word(d, e.Token[:]), amount[:]...)
	}
	return d
}

// mintTx is a mint from a throwaway signer (nonce 0, no funds).
func mintTx(signer byte, data []byte) *Tx {
	return &Tx{Hash: Hash{0x31, signer}, Type: TxTypeDynamicFee, ChainID: testChainID, From: Address{0x5e, signer},
		To: MintAddress, HasTo: true, Gas: 1_000_000, GasFeeCap: *gwei, Data: data}
}

// mintLedger allows minting; alice holds native and WETH (bridged).
func mintLedger(t *testing.T) *Ledger {
	t.Helper()
	l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei, Bridge: testBridge(), MintAllowed: true})
	l.Genesis(NativeToken, alice, ether(10))
	return l
}

const hourUs = MintHourUs

// TestMintCredits: a mint from an unfunded throwaway signer credits every
// entry to the recipient, pays no gas, issues what it credits, and logs one
// Mint per entry.
func TestMintCredits(t *testing.T) {
	l := mintLedger(t)
	data := mintData(t, bob, true, MintEntry{NativeToken, *ether(100)}, MintEntry{testWETH, *ether(2)})
	rec := admit(t, l, mintTx(1, data), 5*hourUs)
	if !rec.EffectiveGasPrice.IsZero() || rec.GasUsed != TxGas || l.FeesBurned() != (uint256.Int{}) {
		t.Fatalf("a mint paid gas: price %s, burned %s", rec.EffectiveGasPrice.Dec(), dec(l.FeesBurned()))
	}
	if b := l.Balance(NativeToken, bob); !b.Cash.Eq(ether(100)) {
		t.Fatalf("bob native %s", b.Cash.Dec())
	}
	if b := l.Balance(testWETH, bob); !b.Cash.Eq(ether(2)) {
		t.Fatalf("bob WETH %s", b.Cash.Dec())
	}
	if l.Nonce(Address{0x5e, 1}) != 1 {
		t.Fatal("the signer's nonce was not spent")
	}
	if len(rec.Logs) != 2 {
		t.Fatalf("%d logs", len(rec.Logs))
	}
	lg := rec.Logs[1]
	if lg.Address != MintAddress || lg.Topics[0] != MintTopic() || Address(lg.Topics[1][12:]) != testWETH ||
		Address(lg.Topics[2][12:]) != bob || new(uint256.Int).SetBytes(lg.Data[:32]).Cmp(ether(2)) != 0 || lg.Data[63] != 1 {
		t.Fatalf("log %+v", lg)
	}
	if m := l.LastMint(); m.To != bob || len(m.Tokens) != 2 || !m.DepositToClob {
		t.Fatalf("last mint %+v", m)
	}
}

// TestMintRefusals: every check refuses with its reason and changes
// nothing (nor spends the nonce).
func TestMintRefusals(t *testing.T) {
	one := MintEntry{NativeToken, *ether(1)}
	f := func(name string, l *Ledger, data []byte, mutate func(*Tx), want string) {
		t.Helper()
		tx := mintTx(2, data)
		if mutate != nil {
			mutate(tx)
		}
		before := l.StateHash()
		rec, rej := l.Apply(&Input{Kind: InputTx, Tx: *tx, TimeUs: hourUs})
		if rec != nil || rej.Code != RejectApp || rej.App != MintAddress || rej.Detail != want {
			t.Fatalf("%s: rec %v, reject %+v, want %q", name, rec, rej, want)
		}
		if l.StateHash() != before {
			t.Fatalf("%s: a refused mint changed the state", name)
		}
	}
	l := mintLedger(t)
	disabled := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei})
	f("disabled", disabled, mintData(t, bob, true, one), nil, "Minting is disabled")
	f("short", l, []byte{1, 2}, nil, mintMalformed)
	f("selector", l, []byte{1, 2, 3, 4}, nil, "unknown function selector 0x01020304")
	good := mintData(t, bob, false, one)
	f("truncated", l, good[:len(good)-1], nil, mintMalformed)
	f("trailing", l, append(good[:len(good):len(good)], 0), nil, mintMalformed)
	dirtyTo := append([]byte(nil), good...)
	dirtyTo[4] = 1
	f("dirty address", l, dirtyTo, nil, mintMalformed)
	badBool := append([]byte(nil), good...)
	badBool[4+95] = 2
	f("bool 2", l, badBool, nil, mintMalformed)
	badOffset := append([]byte(nil), good...)
	badOffset[4+63] = 0x40
	f("offset", l, badOffset, nil, mintMalformed)
	// A funded signer: the protocol's balance check passes the value first.
	f("value", l, good, func(tx *Tx) { tx.From, tx.Value = alice, *uint256.NewInt(1) }, mintValue)
	f("zero recipient", l, mintData(t, Address{}, true, one), nil, mintZeroTo)
	f("no tokens", l, mintData(t, bob, true), nil, mintNoTokens)
	many := make([]MintEntry, MintTokensMax+1)
	for i := range many {
		many[i] = one
	}
	f("too many tokens", l, mintData(t, bob, true, many...), nil, "too many tokens (max 16)")
	f("unknown token", l, mintData(t, bob, true, MintEntry{Address{0x99}, *ether(1)}), nil,
		"token not mintable 0x9900000000000000000000000000000000000000")
	f("zero amount", l, mintData(t, bob, true, MintEntry{NativeToken, uint256.Int{}}), nil, mintZeroAmount)
	var over uint256.Int
	over.AddUint64(MintAmountMax, 1)
	f("too much", l, mintData(t, bob, true, MintEntry{NativeToken, over}), nil,
		"amount above maximum 1000000000000000000000000")
	// Exactly the maximum, and 16 entries, pass.
	admit(t, l, mintTx(3, mintData(t, bob, true, MintEntry{NativeToken, *MintAmountMax})), hourUs)
	admit(t, l, mintTx(4, mintData(t, bob, true, many[:MintTokensMax]...)), hourUs)
}

// TestMintHourlyBound: a recipient gets MintsPerAccountHourMax mints per
// hour of the admission clock, whoever signs; the next hour starts afresh,
// and the counters survive a snapshot.
func TestMintHourlyBound(t *testing.T) {
	l := mintLedger(t)
	data := mintData(t, bob, false, MintEntry{NativeToken, *ether(1)})
	for i := 0; i < MintsPerAccountHourMax; i++ {
		admit(t, l, mintTx(byte(10+i), data), 7*hourUs+int64(i))
	}
	want := "too many mints to this account this hour (max 10)"
	if _, rej := l.Apply(&Input{Kind: InputTx, Tx: *mintTx(30, data), TimeUs: 8*hourUs - 1}); rej.Detail != want {
		t.Fatalf("11th mint in the hour: %+v", rej)
	}
	// Another recipient is not held back.
	admit(t, l, mintTx(31, mintData(t, alice, false, MintEntry{NativeToken, *ether(1)})), 8*hourUs-1)
	loaded, err := LoadSnapshot(Config{ChainID: testChainID, Bridge: testBridge(), MintAllowed: true}, l.AppendSnapshot(nil))
	if err != nil {
		t.Fatal(err)
	}
	if loaded.StateHash() != l.StateHash() {
		t.Fatal("snapshot round trip changed the state")
	}
	if _, rej := loaded.Apply(&Input{Kind: InputTx, Tx: *mintTx(32, data), TimeUs: 8*hourUs - 1}); rej.Detail != want {
		t.Fatalf("the loaded ledger forgot the count: %+v", rej)
	}
	for _, led := range []*Ledger{l, loaded} {
		admit(t, led, mintTx(33, data), 8*hourUs)
	}
	if loaded.StateHash() != l.StateHash() {
		t.Fatal("the loaded ledger diverged")
	}
	if b := l.Balance(NativeToken, bob); !b.Cash.Eq(ether(MintsPerAccountHourMax + 1)) {
		t.Fatalf("bob %s", b.Cash.Dec())
	}
}

// TestMintRecipientsBound: one hour serves MintRecipientsHourMax
// recipients; a recipient already served this hour still is.
func TestMintRecipientsBound(t *testing.T) {
	l := mintLedger(t)
	signer := func(i int) *Tx {
		tx := mintTx(0, nil)
		tx.From = Address{0x5f, byte(i >> 8), byte(i)}
		tx.Hash = Hash{0x32, byte(i >> 8), byte(i)}
		return tx
	}
	for i := 0; i < MintRecipientsHourMax; i++ {
		tx := signer(i)
		tx.Data = mintData(t, Address{0x70, byte(i >> 8), byte(i)}, false, MintEntry{NativeToken, *uint256.NewInt(1)})
		admit(t, l, tx, hourUs)
	}
	tx := signer(MintRecipientsHourMax)
	tx.Data = mintData(t, bob, false, MintEntry{NativeToken, *uint256.NewInt(1)})
	if _, rej := l.Apply(&Input{Kind: InputTx, Tx: *tx, TimeUs: hourUs}); rej.Detail != "too many mint recipients this hour (max 4096)" {
		t.Fatalf("recipient 4097: %+v", rej)
	}
	tx.Data = mintData(t, Address{0x70}, false, MintEntry{NativeToken, *uint256.NewInt(1)})
	admit(t, l, tx, hourUs)
	again := signer(MintRecipientsHourMax + 1)
	again.Data = mintData(t, bob, false, MintEntry{NativeToken, *uint256.NewInt(1)})
	admit(t, l, again, 2*hourUs) // a new hour
}

// TestMintWaitsForTick: a mint is never staged; the sequencer applies it
// after the tick, like a withdrawal.
func TestMintWaitsForTick(t *testing.T) {
	l := mintLedger(t)
	in := Input{Kind: InputTx, Tx: *mintTx(1, mintData(t, bob, true, MintEntry{NativeToken, *ether(1)})), TimeUs: hourUs, Staged: true}
	if rec, rej := l.Apply(&in); rec != nil || rej.Code != RejectWaitTick {
		t.Fatalf("staged mint: %v %+v", rec, rej)
	}
}
