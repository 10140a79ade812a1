package core

import (
	"crypto/ecdsa"
	"fmt"
	"reflect"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

// TestPreparedEqualsInCore: a ledger fed transactions that PrepareTx
// prepared (as the node's event loops do) and one fed the bare
// transactions (as a replay of the log is) refuse, record, log and settle
// exactly the same, input by input, and end in the same state hash. The
// workload's orderbook calls are random envelopes: single intents and
// batches of every kind, some malformed, some wrapped in delegated() (with
// valid, expired, wrongly signed and foreign certificates), and now and
// then a Pre prepared for another chain or nonce, which the ledger must
// ignore.
func TestPreparedEqualsInCore(t *testing.T) {
	masters := make([]*ecdsa.PrivateKey, 3)
	for i := range masters {
		masters[i], _ = crypto.ToECDSA(crypto.Keccak256([]byte{0x24, byte(i)}))
	}
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			seen := map[clob.Reason]int{} // delegated calls by orderbook reason
			admitted := 0
			w, bare := newWorkload(seed, clob.Limits{})
			_, prepared := newWorkload(seed, clob.Limits{})
			for _, k := range masters {
				m := Address(crypto.PubkeyToAddress(k.PublicKey))
				for _, l := range []*Ledger{bare, prepared} {
					l.Genesis(NativeToken, m, new(uint256.Int).Mul(uint256.NewInt(5_000), uint256.NewInt(1e18)))
					l.Genesis(wlWeth, m, new(uint256.Int).Mul(uint256.NewInt(20), uint256.NewInt(1e18)))
				}
			}
			apply := func(step int, in *Input) {
				t.Helper()
				pin := *in
				if in.Kind == InputTx {
					PrepareTx(&pin.Tx)
					switch {
					case pin.Tx.Pre == nil:
					case w.chance(3):
						pin.Tx.Pre.ChainID++ // prepared for another chain: ignored
					case w.chance(3):
						pin.Tx.Pre.Nonce++ // for another transaction: ignored
					}
				}
				recA, rejA := bare.Apply(in)
				recB, rejB := prepared.Apply(&pin)
				if in.Kind == InputTx && abi.IsDelegated(in.Tx.Data) {
					if recA != nil {
						admitted++
					}
					seen[rejA.Reason]++
				}
				if !reflect.DeepEqual(rejA, rejB) || !reflect.DeepEqual(recA, recB) {
					t.Fatalf("seed %d step %d: bare %+v %+v, prepared %+v %+v", seed, step, rejA, recA, rejB, recB)
				}
				if recA != nil {
					bare.Settle(recA)
					prepared.Settle(recB)
				}
				if in.Kind == InputTick && !reflect.DeepEqual(bare.LastTick(), prepared.LastTick()) {
					t.Fatalf("seed %d step %d: tick results differ", seed, step)
				}
			}
			for step := range 1500 {
				w.advance()
				for range 200 {
					in, ok := w.tick(bare)
					if !ok {
						break
					}
					apply(step, in)
				}
				in := w.next(bare)
				if in.Kind == InputTx && in.Tx.To == OrderbookAddress && w.chance(30) {
					delegate(w, in, masters)
				}
				apply(step, in)
				if step%250 == 0 && bare.StateHash() != prepared.StateHash() {
					t.Fatalf("seed %d step %d: state hashes differ", seed, step)
				}
			}
			if a, b := bare.StateHash(), prepared.StateHash(); a != b {
				t.Fatalf("seed %d: state hashes %x and %x", seed, a, b)
			}
			if admitted == 0 || seen[clob.ReasonDelegationSignature] == 0 || seen[clob.ReasonDelegationExpired] == 0 {
				t.Fatalf("seed %d: %d delegated calls admitted, refusals %v: the workload missed a case", seed, admitted, seen)
			}
		})
	}
}

// delegate wraps an orderbook call in delegated() by one of masters: mostly
// a certificate that holds, sometimes one that ran out, is signed for
// another delegate or chain, or has a corrupted signature.
func delegate(w *workload, in *Input, masters []*ecdsa.PrivateKey) {
	k := masters[w.r.IntN(len(masters))]
	master := clob.Address(crypto.PubkeyToAddress(k.PublicKey))
	validUntil := uint64(w.nowUs) + 600_000_000
	signedFor, chain := clob.Address(in.Tx.From), uint64(testChainID)
	switch w.r.IntN(12) {
	case 0:
		validUntil = uint64(w.nowUs) / 2 // before the deadline
	case 1:
		signedFor[0] ^= 1
	case 2:
		chain++
	}
	digest := abi.DelegationDigest(chain, signedFor, validUntil)
	sig, err := crypto.Sign(digest[:], k)
	if err != nil {
		panic(err)
	}
	switch w.r.IntN(12) {
	case 0:
		sig[10] ^= 0x40
	case 1:
		sig[64] += 27
	case 2:
		sig[64] += 27
	}
	in.Tx.Data = abi.AppendDelegated(nil, master, validUntil, sig, in.Tx.Data)
}

// TestPrepareTxConcurrent: PrepareTx runs on many event loops at once (its
// keccak sponges come from a pool); each transaction gets its own ids.
func TestPrepareTxConcurrent(t *testing.T) {
	in := clob.Intent{Kind: clob.IntentSubmit, Book: wethBook, Side: clob.Buy, Deadline: 1_000_000}
	in.Size.SetUint64(1e15)
	in.Price.SetUint64(1e16)
	one := abi.AppendSubmitOrder(nil, &in)
	data := abi.AppendSubmitBatch(nil, [][]byte{one, one, one})
	const loops, txs = 4, 200
	errs := make(chan error, loops)
	for g := range loops {
		go func() {
			for n := range uint64(txs) {
				tx := Tx{ChainID: testChainID, Nonce: n, From: Address{byte(g + 1)}, To: OrderbookAddress, HasTo: true, Data: data}
				PrepareTx(&tx)
				p := tx.Pre
				if p == nil || p.Reason != clob.OK || !p.Env.HasIDs || len(p.Env.Intents) != 3 {
					errs <- fmt.Errorf("loop %d tx %d: %+v", g, n, p)
					return
				}
				for i := range p.Env.Intents {
					if want := clob.OrderID(clob.Address(tx.From), n, uint32(i)); p.Env.Intents[i].ID != want {
						errs <- fmt.Errorf("loop %d tx %d intent %d: id %x, want %x", g, n, i, p.Env.Intents[i].ID, want)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range loops {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
