package secp

import (
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	voi "gitlab.com/yawning/secp256k1-voi"
	"gitlab.com/yawning/secp256k1-voi/secec"
)

var (
	feSink  fe
	scSink  sc
	pubSink [64]byte
)

func BenchmarkFieldMul(b *testing.B) {
	b.ReportAllocs()
	x := fe{1, 2, 3, 4}
	y := fe{^uint64(0), 5, 6, ^uint64(0) >> 1}
	for b.Loop() {
		x.mul(&x, &y)
	}
	feSink = x
}

func BenchmarkFieldSqr(b *testing.B) {
	b.ReportAllocs()
	x := fe{1, 2, 3, 4}
	for b.Loop() {
		x.sqr(&x)
	}
	feSink = x
}

func BenchmarkFieldMulGeneric(b *testing.B) {
	b.ReportAllocs()
	x := fe{1, 2, 3, 4}
	y := fe{^uint64(0), 5, 6, ^uint64(0) >> 1}
	for b.Loop() {
		x.mulGeneric(&x, &y)
	}
	feSink = x
}

func BenchmarkFieldSqrt(b *testing.B) {
	b.ReportAllocs()
	x := fe{1, 2, 3, 4}
	for b.Loop() {
		x.sqrt(&x)
	}
	feSink = x
}

func BenchmarkFieldInvVar(b *testing.B) {
	b.ReportAllocs()
	x := fe{1, 2, 3, 4}
	for b.Loop() {
		x.invVar(&x)
	}
	feSink = x
}

func BenchmarkScalarInvVar(b *testing.B) {
	b.ReportAllocs()
	x := sc{1, 2, 3, 4}
	for b.Loop() {
		x.invVar(&x)
	}
	scSink = x
}

type recoverFixture struct {
	hash, r, s [32]byte
	recid      byte
}

func newRecoverFixture(b *testing.B) recoverFixture {
	key, err := crypto.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	var f recoverFixture
	copy(f.hash[:], crypto.Keccak256([]byte("benchmark")))
	sig, err := crypto.Sign(f.hash[:], key)
	if err != nil {
		b.Fatal(err)
	}
	copy(f.r[:], sig[:32])
	copy(f.s[:], sig[32:64])
	f.recid = sig[64]
	return f
}

func BenchmarkRecover(b *testing.B) {
	f := newRecoverFixture(b)
	loadGTables()
	b.ReportAllocs()
	for b.Loop() {
		if !Recover(&pubSink, &f.hash, &f.r, &f.s, f.recid) {
			b.Fatal("recover failed")
		}
	}
}

// BenchmarkRecoverGoEthereum is crypto.Ecrecover: decred's secp256k1 when
// built with CGO_ENABLED=0, libsecp256k1 otherwise.
func BenchmarkRecoverGoEthereum(b *testing.B) {
	f := newRecoverFixture(b)
	sig := append(append(f.r[:], f.s[:]...), f.recid)
	b.ReportAllocs()
	for b.Loop() {
		pub, err := crypto.Ecrecover(f.hash[:], sig)
		if err != nil {
			b.Fatal(err)
		}
		copy(pubSink[:], pub[1:])
	}
}

// BenchmarkRecoverSecec is gitlab.com/yawning/secp256k1-voi, the fastest
// other pure Go implementation in the module graph.
func BenchmarkRecoverSecec(b *testing.B) {
	f := newRecoverFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		r, err := voi.NewScalarFromCanonicalBytes(&f.r)
		if err != nil {
			b.Fatal(err)
		}
		s, err := voi.NewScalarFromCanonicalBytes(&f.s)
		if err != nil {
			b.Fatal(err)
		}
		pub, err := secec.RecoverPublicKey(f.hash[:], r, s, f.recid)
		if err != nil {
			b.Fatal(err)
		}
		copy(pubSink[:], pub.Bytes()[1:])
	}
}
