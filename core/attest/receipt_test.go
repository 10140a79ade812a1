package attest

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

// receiptHeaderSize is the fixed part of the canonical encoding drawn in
// doc.go: tx hash, status, gas used, cumulative gas, effective gas price,
// from, to, log count.
const receiptHeaderSize = 32 + 1 + 8 + 8 + 32 + 20 + 20 + 4

func fill(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

// sampleCommitment returns a receipt with two logs; salt makes it distinct.
func sampleCommitment(salt byte) ReceiptCommitment {
	r := ReceiptCommitment{
		Status:            1,
		GasUsed:           21000,
		CumulativeGasUsed: 42000,
		Logs: []LogCommitment{
			{Address: [20]byte(fill(0xa1, 20)), Topics: [][32]byte{[32]byte(fill(0xb1, 32))}, Data: []byte("one")},
			{Address: [20]byte(fill(0xa2, 20)), Topics: [][32]byte{[32]byte(fill(0xb2, 32)), [32]byte(fill(0xb3, 32))}, Data: []byte("two")},
		},
	}
	r.TxHash[0], r.TxHash[31] = salt, 0x11
	r.EffectiveGasPrice[31] = 7
	r.From[0], r.To[0] = 0xf0, 0x70
	return r
}

// cloneCommitment deep-copies r so a mutation cannot reach the original.
func cloneCommitment(r ReceiptCommitment) ReceiptCommitment {
	c := r
	c.Logs = make([]LogCommitment, len(r.Logs))
	for i, l := range r.Logs {
		c.Logs[i] = LogCommitment{
			Address: l.Address,
			Topics:  append([][32]byte(nil), l.Topics...),
			Data:    append([]byte(nil), l.Data...),
		}
	}
	return c
}

// errTruncated and friends are the test decoder's failures.
var errTruncated = errors.New("truncated")

// decodeCommitment parses the canonical layout back. It exists to prove the
// layout is unambiguous: encode then decode must give the input back.
func decodeCommitment(b []byte) (ReceiptCommitment, error) {
	var r ReceiptCommitment
	if len(b) < receiptHeaderSize {
		return r, errTruncated
	}
	copy(r.TxHash[:], b[0:32])
	r.Status = b[32]
	r.GasUsed = binary.BigEndian.Uint64(b[33:41])
	r.CumulativeGasUsed = binary.BigEndian.Uint64(b[41:49])
	copy(r.EffectiveGasPrice[:], b[49:81])
	copy(r.From[:], b[81:101])
	copy(r.To[:], b[101:121])
	logs := binary.BigEndian.Uint32(b[121:125])
	b = b[receiptHeaderSize:]
	for range logs {
		var l LogCommitment
		if len(b) < 21 {
			return r, errTruncated
		}
		copy(l.Address[:], b[:20])
		topics := int(b[20])
		b = b[21:]
		if topics > MaxLogTopics || len(b) < 32*topics+4 {
			return r, errTruncated
		}
		for i := range topics {
			l.Topics = append(l.Topics, [32]byte(b[32*i:32*i+32]))
		}
		b = b[32*topics:]
		size := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(len(b)) < uint64(size) {
			return r, errTruncated
		}
		l.Data = append([]byte{}, b[:size]...)
		b = b[size:]
		r.Logs = append(r.Logs, l)
	}
	if len(b) != 0 {
		return r, errors.New("trailing bytes")
	}
	return r, nil
}

func TestReceiptLayout(t *testing.T) {
	r := sampleCommitment(0x42)
	enc := AppendReceiptCommitment([]byte("prefix"), &r)
	if string(enc[:6]) != "prefix" {
		t.Fatalf("AppendReceiptCommitment overwrote dst")
	}
	enc = enc[6:]
	want := receiptHeaderSize + (20 + 1 + 32 + 4 + 3) + (20 + 1 + 64 + 4 + 3)
	if len(enc) != want {
		t.Fatalf("encoding is %d bytes, want %d", len(enc), want)
	}
	f := func(off int, field []byte) {
		t.Helper()
		if !bytes.Equal(enc[off:off+len(field)], field) {
			t.Fatalf("offset %d: got %x, want %x", off, enc[off:off+len(field)], field)
		}
	}
	f(0, r.TxHash[:])
	f(32, []byte{1})
	f(33, []byte{0, 0, 0, 0, 0, 0, 0x52, 0x08})
	f(41, []byte{0, 0, 0, 0, 0, 0, 0xa4, 0x10})
	f(49, r.EffectiveGasPrice[:])
	f(81, r.From[:])
	f(101, r.To[:])
	f(121, []byte{0, 0, 0, 2})
	f(125, r.Logs[0].Address[:])
	f(145, []byte{1})
	f(146, r.Logs[0].Topics[0][:])
	f(178, []byte{0, 0, 0, 3, 'o', 'n', 'e'})
	f(185, r.Logs[1].Address[:])
	f(205, []byte{2})
	f(270, []byte{0, 0, 0, 3, 't', 'w', 'o'})

	if got, want := r.Leaf(), [32]byte(crypto.Keccak256(enc)); got != want {
		t.Fatalf("Leaf %x is not keccak256 of the encoding %x", got, want)
	}
	back, err := decodeCommitment(enc)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("layout does not round-trip: %v", err)
	}
}

// TestLeafGolden pins one leaf so that a layout change is noticed.
func TestLeafGolden(t *testing.T) {
	r := sampleCommitment(0x42)
	leaf := r.Leaf()
	if got := hex.EncodeToString(leaf[:]); got != goldenLeaf {
		t.Fatalf("leaf %s, want %s", got, goldenLeaf)
	}
}

func TestLeafChangesWithEveryField(t *testing.T) {
	base := sampleCommitment(1)
	baseLeaf := base.Leaf()
	f := func(name string, mutate func(r *ReceiptCommitment)) {
		t.Helper()
		r := cloneCommitment(base)
		mutate(&r)
		if r.Leaf() == baseLeaf {
			t.Fatalf("%s: leaf unchanged", name)
		}
		if base.Leaf() != baseLeaf {
			t.Fatalf("%s: mutation reached the base", name)
		}
	}
	f("tx hash", func(r *ReceiptCommitment) { r.TxHash[5] ^= 1 })
	f("status", func(r *ReceiptCommitment) { r.Status = 0 })
	f("gas used", func(r *ReceiptCommitment) { r.GasUsed++ })
	f("cumulative gas", func(r *ReceiptCommitment) { r.CumulativeGasUsed++ })
	f("gas price high byte", func(r *ReceiptCommitment) { r.EffectiveGasPrice[0] = 1 })
	f("gas price low byte", func(r *ReceiptCommitment) { r.EffectiveGasPrice[31]++ })
	f("from", func(r *ReceiptCommitment) { r.From[19] ^= 1 })
	f("to", func(r *ReceiptCommitment) { r.To[19] ^= 1 })
	f("from/to swapped", func(r *ReceiptCommitment) { r.From, r.To = r.To, r.From })
	f("no logs", func(r *ReceiptCommitment) { r.Logs = nil })
	f("logs swapped", func(r *ReceiptCommitment) { r.Logs[0], r.Logs[1] = r.Logs[1], r.Logs[0] })
	f("extra empty log", func(r *ReceiptCommitment) { r.Logs = append(r.Logs, LogCommitment{}) })
	f("log address", func(r *ReceiptCommitment) { r.Logs[1].Address[0] ^= 1 })
	f("topic", func(r *ReceiptCommitment) { r.Logs[1].Topics[1][31] ^= 1 })
	f("topics swapped", func(r *ReceiptCommitment) {
		r.Logs[1].Topics[0], r.Logs[1].Topics[1] = r.Logs[1].Topics[1], r.Logs[1].Topics[0]
	})
	f("topic dropped", func(r *ReceiptCommitment) { r.Logs[1].Topics = r.Logs[1].Topics[:1] })
	f("data", func(r *ReceiptCommitment) { r.Logs[0].Data[0] ^= 1 })
	f("data emptied", func(r *ReceiptCommitment) { r.Logs[0].Data = nil })
	// Boundary shifts: the same bytes split differently must not collide.
	f("byte moved between logs' data", func(r *ReceiptCommitment) {
		r.Logs[0].Data, r.Logs[1].Data = []byte("on"), []byte("etwo")
	})
	f("topic moved into data", func(r *ReceiptCommitment) {
		topic := r.Logs[0].Topics[0]
		r.Logs[0].Topics = nil
		r.Logs[0].Data = append(topic[:], r.Logs[0].Data...)
	})
}

func TestLeafDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	r := sampleCommitment(9)
	r.Leaf() // grow the pooled scratch once
	if allocs := testing.AllocsPerRun(100, func() { r.Leaf() }); allocs != 0 {
		t.Fatalf("Leaf: %v allocs per call", allocs)
	}
}

func TestLogTopicsLimit(t *testing.T) {
	f := func(topics int, wantPanic bool) {
		t.Helper()
		defer func() {
			if got := recover() != nil; got != wantPanic {
				t.Fatalf("%d topics: panic=%v, want %v", topics, got, wantPanic)
			}
		}()
		r := ReceiptCommitment{Logs: []LogCommitment{{Topics: make([][32]byte, topics)}}}
		r.Leaf()
	}
	f(0, false)
	f(MaxLogTopics, false)
	f(MaxLogTopics+1, true)
}

// TestPooledScratchIsBounded checks that a huge receipt does not pin its
// encoding buffer in the pool.
func TestPooledScratchIsBounded(t *testing.T) {
	r := ReceiptCommitment{Logs: []LogCommitment{{Data: make([]byte, 2*maxPooledEncSize)}}}
	want := [32]byte(crypto.Keccak256(AppendReceiptCommitment(nil, &r)))
	if r.Leaf() != want {
		t.Fatalf("large receipt leaf wrong")
	}
	h := getHasher()
	h.enc = make([]byte, 0, 2*maxPooledEncSize)
	putHasher(h)
	if h.enc != nil {
		t.Fatalf("oversized scratch kept in the pool")
	}
}

func FuzzReceiptLayout(f *testing.F) {
	r := sampleCommitment(3)
	f.Add(AppendReceiptCommitment(nil, &r))
	f.Add(AppendReceiptCommitment(nil, &ReceiptCommitment{}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeCommitment(b)
		if err != nil {
			return
		}
		// Canonical: a decodable input re-encodes to itself, so no two
		// commitments share an encoding.
		if enc := AppendReceiptCommitment(nil, &got); !bytes.Equal(enc, b) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", b, enc)
		}
		if got.Leaf() != [32]byte(crypto.Keccak256(b)) {
			t.Fatalf("Leaf is not keccak256 of the encoding")
		}
	})
}
