package ethtx

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

var (
	txSink   *types.Transaction
	addrSink common.Address
)

// benchFixtures are small (plain transfer), medium (ERC-20 call) and large
// (4 KiB contract creation) transactions.
var benchFixtures = []string{"legacy eip155", "eip1559", "eip1559 create"}

func BenchmarkDecode(b *testing.B) {
	raws := fixtures(b)
	for _, name := range benchFixtures {
		raw := raws[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				tx, err := Decode(raw)
				if err != nil {
					b.Fatal(err)
				}
				txSink = tx
			}
		})
	}
}

// BenchmarkSender recovers from an already decoded transaction; Sender
// keeps no cache, so every iteration does the full work.
func BenchmarkSender(b *testing.B) {
	raws := fixtures(b)
	for _, name := range benchFixtures {
		tx, err := Decode(raws[name])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				addr, err := Sender(tx)
				if err != nil {
					b.Fatal(err)
				}
				addrSink = addr
			}
		})
	}
}

// BenchmarkDecodeSender is the write path: Decode then Sender.
func BenchmarkDecodeSender(b *testing.B) {
	raws := fixtures(b)
	for _, name := range benchFixtures {
		raw := raws[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				tx, err := Decode(raw)
				if err != nil {
					b.Fatal(err)
				}
				if addrSink, err = Sender(tx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeSenderGoEthereum is the same path with go-ethereum:
// UnmarshalBinary then types.Sender. The transaction caches its sender, so
// each iteration decodes a fresh one; subtract BenchmarkDecode for the
// recovery alone. Built with CGO_ENABLED=0 this is decred's secp256k1.
func BenchmarkDecodeSenderGoEthereum(b *testing.B) {
	raws := fixtures(b)
	signer := types.LatestSignerForChainID(big.NewInt(0x50d))
	for _, name := range benchFixtures {
		raw := raws[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				tx := new(types.Transaction)
				if err := tx.UnmarshalBinary(raw); err != nil {
					b.Fatal(err)
				}
				addr, err := types.Sender(signer, tx)
				if err != nil {
					b.Fatal(err)
				}
				addrSink = addr
			}
		})
	}
}

// BenchmarkSigHashGoEthereum is go-ethereum's signing hash alone, to compare
// with the streaming encoder inside Sender.
func BenchmarkSigHashGoEthereum(b *testing.B) {
	raws := fixtures(b)
	signer := types.LatestSignerForChainID(big.NewInt(0x50d))
	for _, name := range benchFixtures {
		tx, err := Decode(raws[name])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = signer.Hash(tx)
			}
		})
	}
}

func BenchmarkSigHash(b *testing.B) {
	raws := fixtures(b)
	for _, name := range benchFixtures {
		tx, err := Decode(raws[name])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			h := hasherPool.Get().(*hasher)
			defer hasherPool.Put(h)
			for b.Loop() {
				var f sigFields
				if _, err := signedFields(&f, tx, &h.chainID); err != nil {
					b.Fatal(err)
				}
				h.encodeSigHash(&f)
			}
		})
	}
}

// BenchmarkSenderParallel recovers on every core at once (-cpu 1,2): the
// recovery bound the load tools quote divides the cores by one recovery's
// time, which holds only if the cores scale; ns/op here is the wall time per
// recovery with all of them busy.
func BenchmarkSenderParallel(b *testing.B) {
	raws := fixtures(b)
	tx, err := Decode(raws["eip1559"])
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := Sender(tx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
