package attest

import (
	"crypto/ecdsa"
	"encoding/binary"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/ledgervenue/node/core/claim"
)

// MaxCommitteeSize bounds the number of validators. Verify keeps a bitmap of
// this many bits on the stack to detect duplicate validators.
const MaxCommitteeSize = 256

// Committee is a simulated validator committee for one epoch. It holds the
// validators' private keys and signs batch roots with Attest.
//
// Invariant: N == len(Members) == len(keys), F == (N-1)/3, Quorum == N-F,
// and Members are distinct.
type Committee struct {
	Epoch uint64
	// N is the committee size, F the number of Byzantine members tolerated
	// ((N-1)/3) and Quorum the number of attestations needed (N-F).
	N, F, Quorum int
	// Members are the validators' addresses in key order.
	Members [][20]byte

	keys []*ecdsa.PrivateKey
	h    hasher // Attest's scratch; Committee has one owner.
}

// Info is the public part of a committee: what a verifier needs.
type Info struct {
	Epoch   uint64
	Quorum  int
	Members [][20]byte
}

// NewCommittee derives n validator keys from seed: key i is
// keccak256(seed || uint32_be(i)), re-hashed until it is a valid secp256k1
// scalar. The same seed always yields the same committee.
//
// REQUIRES: 1 <= n <= MaxCommitteeSize.
func NewCommittee(seed []byte, n int, epoch uint64) *Committee {
	if n < 1 || n > MaxCommitteeSize {
		panic("BUG: attest.NewCommittee: n out of [1, MaxCommitteeSize]")
	}
	f := (n - 1) / 3
	c := &Committee{
		Epoch:   epoch,
		N:       n,
		F:       f,
		Quorum:  n - f,
		Members: make([][20]byte, n),
		keys:    make([]*ecdsa.PrivateKey, n),
		h:       newHasher(),
	}
	for i := range n {
		c.keys[i] = deriveKey(seed, uint32(i))
		c.Members[i] = crypto.PubkeyToAddress(c.keys[i].PublicKey)
	}
	for i := range n {
		if indexOf(c.Members[:i], c.Members[i]) >= 0 {
			panic("BUG: attest.NewCommittee: derived two equal validator addresses")
		}
	}
	return c
}

// Info returns the public part of the committee. Members is a copy.
func (c *Committee) Info() Info {
	return Info{
		Epoch:   c.Epoch,
		Quorum:  c.Quorum,
		Members: append([][20]byte(nil), c.Members...),
	}
}

// PublicKey returns member i's public key, compressed (33 bytes).
//
// REQUIRES: 0 <= i < N.
func (c *Committee) PublicKey(i int) []byte {
	return crypto.CompressPubkey(&c.keys[i].PublicKey)
}

func deriveKey(seed []byte, i uint32) *ecdsa.PrivateKey {
	pre := binary.BigEndian.AppendUint32(append([]byte(nil), seed...), i)
	var k [32]byte
	copy(k[:], crypto.Keccak256(pre))
	return firstValidKey(k)
}

// firstValidKey re-hashes k until it is a scalar in [1, N-1]. A keccak
// output falls outside that range with probability about 2^-128.
func firstValidKey(k [32]byte) *ecdsa.PrivateKey {
	for {
		key, err := crypto.ToECDSA(k[:])
		if err == nil {
			return key
		}
		copy(k[:], crypto.Keccak256(k[:]))
	}
}

// indexOf returns the position of addr in members, or -1.
func indexOf(members [][20]byte, addr [20]byte) int {
	for i := range members {
		if members[i] == addr {
			return i
		}
	}
	return -1
}

// SignClaim has the members at the given indices sign a bridge claim hash
// (docs/bridge.md §4): the hash itself, no prefix, v in {27, 28}.
//
// REQUIRES: every index in [0, N).
func (c *Committee) SignClaim(h [32]byte, members []int) []claim.Signature {
	out := make([]claim.Signature, len(members))
	for i, m := range members {
		out[i] = claim.Signature{Signer: c.Members[m], Sig: sign(&h, c.keys[m])}
	}
	return out
}
