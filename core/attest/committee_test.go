package attest

import (
	"bytes"
	"encoding/hex"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

var testSeed = []byte("ledgervenue attest test seed")

func TestQuorumRule(t *testing.T) {
	f := func(n, wantF, wantQuorum int) {
		t.Helper()
		c := NewCommittee(testSeed, n, 0)
		if c.N != n || c.F != wantF || c.Quorum != wantQuorum {
			t.Fatalf("n=%d: got N=%d F=%d Quorum=%d, want F=%d Quorum=%d", n, c.N, c.F, c.Quorum, wantF, wantQuorum)
		}
		if len(c.Members) != n || len(c.Info().Members) != n || c.Info().Quorum != wantQuorum {
			t.Fatalf("n=%d: members or info disagree with N", n)
		}
	}
	f(1, 0, 1)
	f(2, 0, 2)
	f(3, 0, 3)
	f(4, 1, 3)
	f(5, 1, 4)
	f(6, 1, 5)
	f(7, 2, 5)
	f(10, 3, 7)
	f(100, 33, 67)
}

func TestNewCommitteeLimits(t *testing.T) {
	f := func(n int, wantPanic bool) {
		t.Helper()
		defer func() {
			if got := recover() != nil; got != wantPanic {
				t.Fatalf("n=%d: panic=%v, want %v", n, got, wantPanic)
			}
		}()
		NewCommittee(testSeed, n, 0)
	}
	f(-1, true)
	f(0, true)
	f(1, false)
	f(MaxCommitteeSize, false)
	f(MaxCommitteeSize+1, true)
}

func TestCommitteeDeterminism(t *testing.T) {
	a := NewCommittee(testSeed, 7, 3)
	b := NewCommittee(testSeed, 7, 3)
	for i := range a.Members {
		if a.Members[i] != b.Members[i] || a.keys[i].D.Cmp(b.keys[i].D) != 0 {
			t.Fatalf("member %d differs between two committees of one seed", i)
		}
	}
	other := NewCommittee([]byte("another seed"), 7, 3)
	for i := range a.Members {
		if a.Members[i] == other.Members[i] {
			t.Fatalf("member %d equal under two seeds", i)
		}
	}
	// A smaller committee of the same seed is a prefix of the larger one.
	small := NewCommittee(testSeed, 4, 3)
	for i := range small.Members {
		if small.Members[i] != a.Members[i] {
			t.Fatalf("member %d not stable across committee sizes", i)
		}
	}
	if a.Epoch != 3 || a.Info().Epoch != 3 {
		t.Fatalf("epoch not kept")
	}
}

// TestKeyDerivationFormula recomputes key i as the doc states it.
func TestKeyDerivationFormula(t *testing.T) {
	c := NewCommittee(testSeed, 3, 0)
	for i := range 3 {
		pre := append(append([]byte(nil), testSeed...), 0, 0, 0, byte(i))
		key, err := crypto.ToECDSA(crypto.Keccak256(pre))
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if got := crypto.PubkeyToAddress(key.PublicKey); got != c.Members[i] {
			t.Fatalf("member %d: got %x, want %x", i, c.Members[i], got)
		}
	}
}

// TestKeyDerivationGolden pins the derived addresses so that a change to the
// derivation is noticed: every node and test fixture depends on them.
func TestKeyDerivationGolden(t *testing.T) {
	c := NewCommittee([]byte("ledgervenue"), 4, 0)
	want := []string{
		goldenMember0, goldenMember1, goldenMember2, goldenMember3,
	}
	for i, w := range want {
		if got := hex.EncodeToString(c.Members[i][:]); got != w {
			t.Errorf("member %d: got %s, want %s", i, got, w)
		}
	}
}

func TestFirstValidKeyRehashes(t *testing.T) {
	order := crypto.S256().Params().N
	f := func(k [32]byte, wantRehash bool) {
		t.Helper()
		key := firstValidKey(k)
		want := new(big.Int).SetBytes(k[:])
		if wantRehash {
			want.SetBytes(crypto.Keccak256(k[:]))
		}
		if key.D.Cmp(want) != 0 {
			t.Fatalf("k=%x: got scalar %x, want %x", k, key.D, want)
		}
	}
	var zero, n, nMinus1, one [32]byte
	order.FillBytes(n[:])
	new(big.Int).Sub(order, big.NewInt(1)).FillBytes(nMinus1[:])
	one[31] = 1
	f(zero, true)
	f(n, true)
	f(nMinus1, false)
	f(one, false)
}

func TestInfoIsACopy(t *testing.T) {
	c := NewCommittee(testSeed, 4, 0)
	info := c.Info()
	info.Members[0][0] ^= 0xff
	if bytes.Equal(info.Members[0][:], c.Members[0][:]) {
		t.Fatalf("Info shares Members with the committee")
	}
}
