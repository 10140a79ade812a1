package attest

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"github.com/ledgervenue/node/core/claim"
	"math/big"
	"reflect"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

// Golden values pin the derivation, layout and digest: a change to any of
// them changes what every stored receipt verifies against.
const (
	goldenMember0 = "a0e5646958c4a667a0ea477d6e354953a97bfd5b"
	goldenMember1 = "f11ea67c9344e56d68cce74e51f723e3b179049e"
	goldenMember2 = "711098157a0283a0402e8a143d7170624ed911ad"
	goldenMember3 = "162f6fb671f249abbd28b49a58a0ee27fa2c7f75"
	goldenLeaf    = "7650714f94e47126929066887f3a024ae914aab6f79b127c9e20b12625ef1b2e"
	goldenRoot    = "f0a2df2b06ff1699558cfa97e50becfc07cef35c63d6e4b1c46b0ba872fa5207"
	goldenDigest  = "95a819bd7b6db1e68c98d43a8c42e7e258b204b893f3c4f556b424537e9c7da5"
)

// signedReceipt is everything a verifier gets for one receipt.
type signedReceipt struct {
	info   Info
	commit ReceiptCommitment
	proof  Proof
	root   [32]byte
	atts   []Attestation
}

func (s *signedReceipt) verify() error {
	return Verify(s.info, s.commit.Leaf(), s.proof, s.root, s.atts)
}

// newSignedReceipt attests a batch of 5 receipts by a committee of 4 and
// returns receipt 2 of it.
func newSignedReceipt(t testing.TB) signedReceipt {
	t.Helper()
	c := NewCommittee(testSeed, 4, 9)
	commits := make([]ReceiptCommitment, 5)
	leaves := make([][32]byte, len(commits))
	for i := range commits {
		commits[i] = sampleCommitment(byte(i))
		leaves[i] = commits[i].Leaf()
	}
	b := c.Attest(nil, 77, 1_700_000_000_000_000, leaves)
	return signedReceipt{
		info:   c.Info(),
		commit: cloneCommitment(commits[2]),
		proof:  b.Proof(2),
		root:   b.Root,
		atts:   b.Attestations(2),
	}
}

func TestReceiptVerifies(t *testing.T) {
	s := newSignedReceipt(t)
	if err := s.verify(); err != nil {
		t.Fatalf("genuine receipt: %v", err)
	}
	if len(s.atts) != 4 || s.atts[0].Seq != 77 || s.atts[0].BatchIndex != 2 || s.atts[0].Timestamp != 1_700_000_000_000_000 {
		t.Fatalf("attestation fields wrong: %+v", s.atts[0])
	}
	for i, a := range s.atts {
		if a.Validator != s.info.Members[i] {
			t.Fatalf("attestation %d not in key order", i)
		}
	}
}

func TestVerifyRejectsTampering(t *testing.T) {
	genuine := newSignedReceipt(t)
	f := func(name string, want error, mutate func(s *signedReceipt)) {
		t.Helper()
		s := newSignedReceipt(t)
		mutate(&s)
		err := s.verify()
		if !errors.Is(err, want) {
			t.Fatalf("%s: got %v, want %v", name, err, want)
		}
		if err := genuine.verify(); err != nil {
			t.Fatalf("%s: mutation reached the genuine receipt: %v", name, err)
		}
	}
	// Every commitment field changes the leaf, so the proof fails.
	f("tx hash", ErrBadProof, func(s *signedReceipt) { s.commit.TxHash[0] ^= 1 })
	f("status", ErrBadProof, func(s *signedReceipt) { s.commit.Status = 0 })
	f("gas used", ErrBadProof, func(s *signedReceipt) { s.commit.GasUsed-- })
	f("cumulative gas", ErrBadProof, func(s *signedReceipt) { s.commit.CumulativeGasUsed++ })
	f("gas price", ErrBadProof, func(s *signedReceipt) { s.commit.EffectiveGasPrice[31]++ })
	f("from", ErrBadProof, func(s *signedReceipt) { s.commit.From[3] ^= 1 })
	f("to", ErrBadProof, func(s *signedReceipt) { s.commit.To[3] ^= 1 })
	f("log address", ErrBadProof, func(s *signedReceipt) { s.commit.Logs[0].Address[0] ^= 1 })
	f("log topic", ErrBadProof, func(s *signedReceipt) { s.commit.Logs[1].Topics[0][0] ^= 1 })
	f("log data", ErrBadProof, func(s *signedReceipt) { s.commit.Logs[1].Data = []byte("tw0") })
	f("log dropped", ErrBadProof, func(s *signedReceipt) { s.commit.Logs = s.commit.Logs[:1] })
	// The proof itself.
	f("path hash", ErrBadProof, func(s *signedReceipt) { s.proof.Path[1][7] ^= 1 })
	f("path order", ErrBadProof, func(s *signedReceipt) { s.proof.Path[0], s.proof.Path[1] = s.proof.Path[1], s.proof.Path[0] })
	f("path truncated", ErrBadProof, func(s *signedReceipt) { s.proof.Path = s.proof.Path[:2] })
	f("path extended", ErrBadProof, func(s *signedReceipt) { s.proof.Path = append(s.proof.Path, [32]byte{}) })
	f("index", ErrBadProof, func(s *signedReceipt) { s.proof.GeneralizedIndex++ })
	f("index zero", ErrBadProof, func(s *signedReceipt) { s.proof.GeneralizedIndex = 0 })
	f("index of another depth", ErrBadProof, func(s *signedReceipt) { s.proof.GeneralizedIndex += 8 })
	f("root", ErrBadProof, func(s *signedReceipt) { s.root[0] ^= 1 })
	// The attestations.
	f("batch index", ErrBatchIndexMismatch, func(s *signedReceipt) { s.atts[1].BatchIndex = 3 })
	f("signature r", ErrBadSignature, func(s *signedReceipt) { s.atts[0].Signature[3] ^= 1 })
	f("signature s", ErrBadSignature, func(s *signedReceipt) { s.atts[2].Signature[40] ^= 1 })
	f("signature v flipped", ErrBadSignature, func(s *signedReceipt) { s.atts[3].Signature[64] ^= 27 ^ 28 })
	f("signature v raw", ErrBadSignature, func(s *signedReceipt) { s.atts[3].Signature[64] -= 27 })
	f("signature zero", ErrBadSignature, func(s *signedReceipt) { s.atts[0].Signature = [65]byte{64: 27} })
	f("timestamp", ErrBadSignature, func(s *signedReceipt) { s.atts[2].Timestamp++ })
	f("seq", ErrBadSignature, func(s *signedReceipt) { s.atts[0].Seq++ })
	f("every seq", ErrBadSignature, func(s *signedReceipt) {
		for i := range s.atts {
			s.atts[i].Seq = 78
		}
	})
	f("epoch", ErrBadSignature, func(s *signedReceipt) { s.info.Epoch++ })
	f("validator swapped to another member", ErrBadSignature, func(s *signedReceipt) {
		s.atts[0].Validator, s.atts[1].Validator = s.atts[1].Validator, s.atts[0].Validator
	})
	f("validator not a member", ErrUnknownValidator, func(s *signedReceipt) { s.atts[2].Validator[0] ^= 1 })
	f("signed by another committee", ErrUnknownValidator, func(s *signedReceipt) {
		s.info = NewCommittee([]byte("other"), 4, 9).Info()
	})
}

func TestVerifyQuorum(t *testing.T) {
	f := func(name string, want error, mutate func(s *signedReceipt)) {
		t.Helper()
		s := newSignedReceipt(t)
		mutate(&s)
		if err := s.verify(); !errors.Is(err, want) || (want == nil && err != nil) {
			t.Fatalf("%s: got %v, want %v", name, err, want)
		}
	}
	f("all four", nil, func(s *signedReceipt) {})
	f("exactly quorum", nil, func(s *signedReceipt) { s.atts = s.atts[1:] })
	f("quorum in another order", nil, func(s *signedReceipt) {
		s.atts = []Attestation{s.atts[3], s.atts[0], s.atts[2]}
	})
	f("one short", ErrNotEnoughAttestations, func(s *signedReceipt) { s.atts = s.atts[:2] })
	f("none", ErrNotEnoughAttestations, func(s *signedReceipt) { s.atts = nil })
	// A validator listed twice counts once: two distinct plus a repeat is
	// not a quorum of three, and is rejected as a duplicate.
	f("duplicate fills the quorum", ErrDuplicateValidator, func(s *signedReceipt) {
		s.atts = []Attestation{s.atts[0], s.atts[1], s.atts[0]}
	})
	f("duplicate on top of a quorum", ErrDuplicateValidator, func(s *signedReceipt) {
		s.atts = []Attestation{s.atts[0], s.atts[1], s.atts[2], s.atts[1]}
	})
	f("malleated copy of a member's signature", ErrDuplicateValidator, func(s *signedReceipt) {
		m := s.atts[0]
		sv := new(big.Int).SetBytes(m.Signature[32:64])
		sv.Sub(crypto.S256().Params().N, sv).FillBytes(m.Signature[32:64])
		m.Signature[64] ^= 27 ^ 28
		s.atts = []Attestation{s.atts[0], s.atts[1], m}
	})
	f("more than the committee", ErrTooManyAttestations, func(s *signedReceipt) {
		s.atts = append(s.atts, s.atts[0])
	})
	f("one bad among a quorum of good", ErrBadSignature, func(s *signedReceipt) { s.atts[3].Signature[5] ^= 1 })
	f("zero quorum", ErrInvalidCommittee, func(s *signedReceipt) { s.info.Quorum = 0; s.atts = nil })
	f("quorum above size", ErrInvalidCommittee, func(s *signedReceipt) { s.info.Quorum = 5 })
	f("no members", ErrInvalidCommittee, func(s *signedReceipt) { s.info.Members = nil })
	f("too many members", ErrInvalidCommittee, func(s *signedReceipt) {
		s.info.Members = make([][20]byte, MaxCommitteeSize+1)
	})
	f("quorum one of four", nil, func(s *signedReceipt) { s.info.Quorum = 1; s.atts = s.atts[2:3] })
}

// TestBatchSizes attests batches of several sizes and verifies every leaf.
func TestBatchSizes(t *testing.T) {
	c := NewCommittee(testSeed, 4, 1)
	info := c.Info()
	var b *Batch
	for _, n := range []int{1, 2, 3, 255, 256, MaxBatchLeaves} {
		leaves := testLeaves(n, byte(n))
		b = c.Attest(b, uint64(n), int64(n)*1000, leaves)
		if b.Len() != n || len(b.Sigs) != 4 || b.Root != naiveRoot(leaves) {
			t.Fatalf("n=%d: batch malformed", n)
		}
		for i := range leaves {
			if err := Verify(info, leaves[i], b.Proof(i), b.Root, b.Attestations(i)); err != nil {
				t.Fatalf("n=%d leaf %d: %v", n, i, err)
			}
		}
		// A leaf from another position does not verify at this one.
		if err := Verify(info, leaves[0], b.Proof(n-1), b.Root, b.Attestations(n-1)); n > 1 && !errors.Is(err, ErrBadProof) {
			t.Fatalf("n=%d: leaf 0 verified at index %d: %v", n, n-1, err)
		}
	}
}

// TestRestore: a batch rebuilt from its stored parts is the signed one
// (root, digest, every receipt's proof and attestations verify); leaves that
// are not the signed ones are refused.
func TestRestore(t *testing.T) {
	c := NewCommittee(testSeed, 4, 3)
	info := c.Info()
	for _, n := range []int{1, 3, 256, MaxBatchLeaves} {
		leaves := testLeaves(n, byte(n))
		b := c.Attest(nil, 11, 12_000, leaves)
		r, err := Restore(b.Epoch, b.Seq, b.Timestamp, b.Root, leaves, b.Sigs)
		if err != nil || r.Root != b.Root || r.Digest != b.Digest || r.Len() != n || !reflect.DeepEqual(r.Sigs, b.Sigs) {
			t.Fatalf("n=%d: restored %+v, %v", n, r, err)
		}
		for i := range leaves {
			if err := Verify(info, leaves[i], r.Proof(i), r.Root, r.Attestations(i)); err != nil {
				t.Fatalf("n=%d leaf %d of the restored batch: %v", n, i, err)
			}
		}
		leaves[n-1][0] ^= 1
		if _, err := Restore(b.Epoch, b.Seq, b.Timestamp, b.Root, leaves, b.Sigs); !errors.Is(err, ErrRootMismatch) {
			t.Fatalf("n=%d: a changed leaf restored: %v", n, err)
		}
	}
}

func TestAttestDeterminism(t *testing.T) {
	leaves := testLeaves(37, 1)
	a := NewCommittee(testSeed, 4, 2).Attest(nil, 5, 6, leaves)
	b := NewCommittee(testSeed, 4, 2).Attest(nil, 5, 6, leaves)
	if a.Root != b.Root || !reflect.DeepEqual(a.Sigs, b.Sigs) {
		t.Fatalf("same seed and batch gave different roots or signatures")
	}
	later := NewCommittee(testSeed, 4, 2).Attest(nil, 5, 7, leaves)
	if later.Root != a.Root || later.Sigs[0] == a.Sigs[0] {
		t.Fatalf("timestamp must change the signatures, not the root")
	}
}

func TestAttestGolden(t *testing.T) {
	c := NewCommittee([]byte("ledgervenue"), 4, 0)
	b := c.Attest(nil, 1, 1_000_000, testLeaves(3, 0))
	if got := hex.EncodeToString(b.Root[:]); got != goldenRoot {
		t.Fatalf("root %s, want %s", got, goldenRoot)
	}
	d := Digest(0, 1, 1_000_000, b.Root)
	if got := hex.EncodeToString(d[:]); got != goldenDigest {
		t.Fatalf("digest %s, want %s", got, goldenDigest)
	}
}

// TestAttestReusesBatch refills one Batch with batches of changing sizes and
// compares each with a fresh one.
func TestAttestReusesBatch(t *testing.T) {
	c := NewCommittee(testSeed, 4, 0)
	var reused *Batch
	for _, n := range []int{MaxBatchLeaves, 3, 1, 64, 5, 200} {
		leaves := testLeaves(n, byte(n))
		reused = c.Attest(reused, uint64(n), 1, leaves)
		fresh := c.Attest(nil, uint64(n), 1, leaves)
		if reused.Root != fresh.Root || !reflect.DeepEqual(reused.Sigs, fresh.Sigs) || reused.Len() != n {
			t.Fatalf("n=%d: reused batch differs from a fresh one", n)
		}
		for _, i := range []int{0, n / 2, n - 1} {
			if !reflect.DeepEqual(reused.Proof(i), fresh.Proof(i)) {
				t.Fatalf("n=%d leaf %d: proofs differ", n, i)
			}
		}
	}
}

func TestAttestLeafLimits(t *testing.T) {
	c := NewCommittee(testSeed, 1, 0)
	f := func(n int, wantPanic bool) {
		t.Helper()
		defer func() {
			if got := recover() != nil; got != wantPanic {
				t.Fatalf("%d leaves: panic=%v, want %v", n, got, wantPanic)
			}
		}()
		c.Attest(nil, 0, 0, make([][32]byte, n))
	}
	f(0, true)
	f(1, false)
	f(MaxBatchLeaves, false)
	f(MaxBatchLeaves+1, true)
}

func TestBatchIndexLimits(t *testing.T) {
	b := NewCommittee(testSeed, 1, 0).Attest(nil, 0, 0, testLeaves(3, 0))
	f := func(i int, wantPanic bool) {
		t.Helper()
		for _, call := range []func(){func() { b.Proof(i) }, func() { b.Attestations(i) }} {
			func() {
				defer func() {
					if got := recover() != nil; got != wantPanic {
						t.Fatalf("index %d: panic=%v, want %v", i, got, wantPanic)
					}
				}()
				call()
			}()
		}
	}
	f(-1, true)
	f(0, false)
	f(2, false)
	f(3, true)
}

func TestSignatureFormat(t *testing.T) {
	c := NewCommittee(testSeed, 4, 0)
	b := c.Attest(nil, 1, 2, testLeaves(4, 0))
	d := Digest(c.Epoch, 1, 2, b.Root)
	for i, s := range b.Sigs {
		v := s.Signature[64]
		if v != 27 && v != 28 {
			t.Fatalf("sig %d: v = %d", i, v)
		}
		sig := s.Signature
		sig[64] -= 27
		pub, err := crypto.SigToPub(d[:], sig[:])
		if err != nil || crypto.PubkeyToAddress(*pub) != c.Members[i] || s.Validator != c.Members[i] {
			t.Fatalf("sig %d does not recover to member %d (%v)", i, i, err)
		}
	}
}

func TestDigestLayout(t *testing.T) {
	if len(digestDomain) != 27 {
		t.Fatalf("domain tag is %d bytes; doc.go says 27", len(digestDomain))
	}
	root := [32]byte(fill(0x5a, 32))
	pre := []byte("ledgervenue/attest/batch/v1")
	pre = binary.BigEndian.AppendUint64(pre, 3)
	pre = binary.BigEndian.AppendUint64(pre, 4)
	pre = binary.BigEndian.AppendUint64(pre, 0xffff_ffff_ffff_fffb) // -5
	pre = append(pre, root[:]...)
	if got := Digest(3, 4, -5, root); got != [32]byte(crypto.Keccak256(pre)) {
		t.Fatalf("digest does not match its documented layout")
	}
	base := Digest(3, 4, 5, root)
	root[31] ^= 1
	for i, d := range [][32]byte{Digest(2, 4, 5, [32]byte(fill(0x5a, 32))), Digest(3, 5, 5, [32]byte(fill(0x5a, 32))), Digest(3, 4, 6, [32]byte(fill(0x5a, 32))), Digest(3, 4, 5, root)} {
		if d == base {
			t.Fatalf("input %d does not change the digest", i)
		}
	}
}

// The committee's claim signatures make a proof the bridged chain accepts
// with n − f signers, and not with fewer.
func TestSignClaim(t *testing.T) {
	c := NewCommittee([]byte("claim"), 4, 1)
	h := [32]byte{1, 2, 3}
	ok := claim.Proof(c.SignClaim(h, []int{3, 0, 2}))
	if err := claim.Verify(h, ok, c.Members, c.F); err != nil {
		t.Fatalf("n - f signers: %v", err)
	}
	few := claim.Proof(c.SignClaim(h, []int{1, 2}))
	if err := claim.Verify(h, few, c.Members, c.F); err != claim.ErrTooFewSigners {
		t.Fatalf("two signers of four: got %v", err)
	}
}

// TestAttestBySubset: a batch signed by a subset carries those members'
// signatures only, in key order; it verifies with a quorum of signers and
// fails with fewer, and the subset's signatures equal the full batch's.
func TestAttestBySubset(t *testing.T) {
	c := NewCommittee(testSeed, 4, 9)
	c1, c2 := sampleCommitment(1), sampleCommitment(2)
	leaves := [][32]byte{c1.Leaf(), c2.Leaf()}
	full := c.Attest(nil, 5, 1_700_000_000_000_000, leaves)
	for _, tc := range []struct {
		members []int
		want    error
	}{{[]int{0, 2, 3}, nil}, {[]int{1, 2, 3}, nil}, {[]int{0, 3}, ErrNotEnoughAttestations}, {[]int{}, ErrNotEnoughAttestations}} {
		b := c.AttestBy(nil, 5, 1_700_000_000_000_000, leaves, tc.members)
		if len(b.Sigs) != len(tc.members) {
			t.Fatalf("members %v: %d signatures", tc.members, len(b.Sigs))
		}
		for k, i := range tc.members {
			if b.Sigs[k] != full.Sigs[i] {
				t.Fatalf("members %v: signature %d is not member %d's", tc.members, k, i)
			}
		}
		err := Verify(c.Info(), leaves[1], b.Proof(1), b.Root, b.Attestations(1))
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Fatalf("members %v: verify %v, want %v", tc.members, err, tc.want)
		}
	}
	for _, bad := range [][]int{{2, 1, 3}, {0, 0, 1}, {0, 1, 4}, {-1, 0, 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("members %v: no panic", bad)
				}
			}()
			c.AttestBy(nil, 5, 0, leaves, bad)
		}()
	}
}

// TestLeafHashesTheWholeEncoding checks that Leaf, which hashes a large
// receipt's encoding a chunk at a time, gives keccak256 of the whole of
// AppendReceiptCommitment, for receipts below, at and far beyond a chunk.
func TestLeafHashesTheWholeEncoding(t *testing.T) {
	for _, logs := range []int{0, 1, 20, 27, 3000} {
		r := &ReceiptCommitment{Status: 1, GasUsed: 21000, CumulativeGasUsed: 21000}
		r.TxHash[0], r.From[0], r.To[0] = 1, 2, 3
		for i := range logs {
			l := LogCommitment{Address: [20]byte{byte(i)}, Data: make([]byte, i%300)}
			for k := range i % (MaxLogTopics + 1) {
				l.Topics = append(l.Topics, [32]byte{byte(i), byte(k)})
			}
			r.Logs = append(r.Logs, l)
		}
		enc := AppendReceiptCommitment(nil, r)
		if got, want := r.Leaf(), crypto.Keccak256Hash(enc); got != want {
			t.Fatalf("%d logs (%d bytes): leaf %x, want %x", logs, len(enc), got, want)
		}
	}
}
