package attest

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// fuzzDepth is the proof depth of newSignedReceipt's batch of 5 leaves.
const fuzzDepth = 3

const fuzzAttSize = 20 + 8 + 4 + 8 + 65

// fuzzImage lays a receipt's verifier inputs out as bytes so the fuzzer can
// flip any of them: leaf | gi | path | root | attestations.
func fuzzImage(leaf [32]byte, p Proof, root [32]byte, atts []Attestation) []byte {
	b := append([]byte(nil), leaf[:]...)
	b = binary.BigEndian.AppendUint64(b, p.GeneralizedIndex)
	for i := range p.Path {
		b = append(b, p.Path[i][:]...)
	}
	b = append(b, root[:]...)
	for _, a := range atts {
		b = append(b, a.Validator[:]...)
		b = binary.BigEndian.AppendUint64(b, a.Seq)
		b = binary.BigEndian.AppendUint32(b, a.BatchIndex)
		b = binary.BigEndian.AppendUint64(b, uint64(a.Timestamp))
		b = append(b, a.Signature[:]...)
	}
	return b
}

func fromFuzzImage(b []byte) (leaf [32]byte, p Proof, root [32]byte, atts []Attestation) {
	leaf, b = [32]byte(b), b[32:]
	p.GeneralizedIndex, b = binary.BigEndian.Uint64(b), b[8:]
	for range fuzzDepth {
		p.Path, b = append(p.Path, [32]byte(b)), b[32:]
	}
	root, b = [32]byte(b), b[32:]
	for len(b) >= fuzzAttSize {
		var a Attestation
		a.Validator = [20]byte(b)
		a.Seq = binary.BigEndian.Uint64(b[20:])
		a.BatchIndex = binary.BigEndian.Uint32(b[28:])
		a.Timestamp = int64(binary.BigEndian.Uint64(b[32:]))
		a.Signature = [65]byte(b[40:])
		atts, b = append(atts, a), b[fuzzAttSize:]
	}
	return leaf, p, root, atts
}

// FuzzVerify tampers with a genuine receipt and checks that Verify never
// panics and accepts nothing but genuine material. The input's first byte
// reshapes the inputs (drop an attestation, repeat one, resize the path,
// lower the quorum); the rest are (offset u16, xor byte) edits, applied in
// two halves with a check after each.
func FuzzVerify(f *testing.F) {
	s := newSignedReceipt(f)
	genuine := fuzzImage(s.commit.Leaf(), s.proof, s.root, s.atts)
	f.Add([]byte{0})
	f.Add([]byte{0x01})
	f.Add([]byte{0x03})
	f.Add([]byte{0x10})
	f.Add([]byte{0x20})
	f.Add([]byte{0x40})
	f.Add([]byte{0x8e, 0, 200, 1})
	f.Add([]byte{0, 0, 40, 1, 1, 0, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		shape, edits := data[0], data[1:]
		img := append([]byte(nil), genuine...)
		half := len(edits) / 2 / 3 * 3
		for _, part := range [][]byte{edits[:half], edits[half:]} {
			for ; len(part) >= 3; part = part[3:] {
				img[int(binary.BigEndian.Uint16(part))%len(img)] ^= part[2]
			}
			checkFuzzedReceipt(t, s.info, genuine, img, shape)
		}
	})
}

func checkFuzzedReceipt(t *testing.T, info Info, genuine, img []byte, shape byte) {
	leaf, p, root, atts := fromFuzzImage(img)
	for k := 3; k >= 0; k-- {
		if shape&(1<<k) != 0 {
			atts = append(atts[:k:k], atts[k+1:]...)
		}
	}
	if shape&0x10 != 0 && len(atts) > 0 {
		atts = append(atts, atts[0])
	}
	if shape&0x20 != 0 {
		p.Path = p.Path[:len(p.Path)-1]
	}
	if shape&0x40 != 0 {
		p.Path = append(p.Path, [32]byte{})
	}
	if shape&0x80 != 0 {
		info.Quorum = 1
	}
	err := Verify(info, leaf, p, root, atts)
	if shape == 0 && bytes.Equal(img, genuine) && err != nil {
		t.Fatalf("genuine receipt rejected: %v", err)
	}
	if err != nil {
		return
	}
	gLeaf, gProof, gRoot, gAtts := fromFuzzImage(genuine)
	if leaf != gLeaf || root != gRoot || p.GeneralizedIndex != gProof.GeneralizedIndex || len(p.Path) != len(gProof.Path) {
		t.Fatalf("accepted a forged leaf, root or index")
	}
	for i := range p.Path {
		if p.Path[i] != gProof.Path[i] {
			t.Fatalf("accepted a forged path")
		}
	}
	for _, a := range atts {
		if indexOfAttestation(gAtts, a) < 0 {
			t.Fatalf("accepted a forged attestation %+v", a)
		}
	}
}

func indexOfAttestation(atts []Attestation, a Attestation) int {
	for i := range atts {
		if atts[i] == a {
			return i
		}
	}
	return -1
}
