package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Side records: what the committee signed (attestation batches, claim
// proofs) is written to the segment files with the group's inputs, in the
// same write and fdatasync, and to Badger after it without a sync of its
// own. A restart stores again those Badger lost (Sides): a signature is
// never made twice over other contents, and Badger holds nothing that the
// segment files cannot give back.
//
//	side record: kind (u8, high bit set) | body
//	kind 0x81, batch:  | seq 8 | a stored batch's value (doc.go) |
//	kind 0x82, claims: | n 4 | n × (tx hash 32 | tick time 8 | position 4 |
//	                   |     claim hash 32 | proofLen 4 | proof)
//
// A side record takes no seq: it is "at" the seq of the input after it. It
// only ever signs what inputs before it derive (the records are durable
// before the attester takes them), so cutting the log before seq
// (truncate) drops every side record at a later seq and may keep those at
// seq: what they sign is kept.
const (
	sideBatch  = 0x81
	sideClaims = 0x82
)

func isSide(payload []byte) bool { return len(payload) > 0 && payload[0]&0x80 != 0 }

// AddBatch encodes b as a side record before the inputs added after it.
func (b *Inputs) AddBatch(sb *Batch) {
	frames, at := beginFrame(b.frames)
	frames = binary.BigEndian.AppendUint64(append(frames, sideBatch), sb.Seq)
	b.frames = endFrame(appendBatch(frames, sb), at)
}

// AddClaims encodes cs as a side record before the inputs added after it.
func (b *Inputs) AddClaims(cs []Claim) {
	frames, at := beginFrame(b.frames)
	frames = binary.BigEndian.AppendUint32(append(frames, sideClaims), uint32(len(cs)))
	for i := range cs {
		c := &cs[i]
		frames = append(frames, c.TxHash[:]...)
		frames = binary.BigEndian.AppendUint64(frames, uint64(c.TickUs))
		frames = binary.BigEndian.AppendUint32(frames, c.Pos)
		frames = append(frames, c.ClaimHash[:]...)
		frames = binary.BigEndian.AppendUint32(frames, uint32(len(c.Proof)))
		frames = append(frames, c.Proof...)
	}
	b.frames = endFrame(frames, at)
}

// Sides are the side records at or after an input's seq, decoded.
type Sides struct {
	// Batches are in the order written (batch seq ascending), without
	// Records.
	Batches []*Batch
	Claims  []Claim
}

// Sides returns the side records at seq from or later (a restart passes
// the seq after Derived: what Badger may not hold).
func (l *Log) Sides(from uint64) (Sides, error) {
	var out Sides
	err := l.segs.sides(from, func(p []byte) error {
		b, cs, err := DecodeSide(p)
		if b != nil {
			out.Batches = append(out.Batches, b)
		}
		out.Claims = append(out.Claims, cs...)
		return err
	})
	if err != nil {
		return Sides{}, fmt.Errorf("intent log side records: %w", err)
	}
	return out, nil
}

// DecodeSide decodes a side record's payload: an attestation batch
// (without Records) or claims.
func DecodeSide(p []byte) (*Batch, []Claim, error) {
	switch p[0] {
	case sideBatch:
		if len(p) < 9 {
			return nil, nil, errBatchCorrupt
		}
		b := &Batch{Seq: binary.BigEndian.Uint64(p[1:])}
		if err := decodeBatch(p[9:], b); err != nil {
			return nil, nil, err
		}
		return b, nil, nil
	case sideClaims:
		cs, err := decodeClaims(p[1:])
		return nil, cs, err
	}
	return nil, nil, fmt.Errorf("%w: side record of kind %#x", ErrCorrupt, p[0])
}

func decodeClaims(b []byte) ([]Claim, error) {
	r := newReader(b)
	n := r.U32()
	if uint64(n)*(32+8+4+32+4) > uint64(r.Left()) {
		return nil, ErrCorrupt
	}
	cs := make([]Claim, n)
	for i := range cs {
		c := &cs[i]
		r.bytes(c.TxHash[:])
		c.TickUs = int64(r.U64())
		c.Pos = r.U32()
		r.bytes(c.ClaimHash[:])
		if pn := r.U32(); pn > 0 {
			c.Proof = slices.Clone(r.Take(int(pn)))
		}
	}
	return cs, r.end()
}

// sides calls fn, in order, with the payload of every side record at seq
// from or later, to the log's end (valid only during the call).
func (s *segments) sides(from uint64, fn func(p []byte) error) error {
	s.mu.Lock()
	segs := slices.Clone(s.segs)
	s.mu.Unlock()
	// A side record at from may end the segment before the one holding
	// from: start at the segment holding from-1.
	i, found := slices.BinarySearch(segs, max(from, 2)-1)
	if !found {
		i--
	}
	for i = max(i, 0); i < len(segs); i++ {
		c, err := openSegmentAt(s.path(segs[i]), segs[i])
		if err != nil {
			return err
		}
		seq := segs[i] // the seq a side record read now is at
		for {
			p, err := c.frame()
			if errors.Is(err, errTorn) {
				break
			}
			if !isSide(p) {
				seq++
				continue
			}
			if seq >= from {
				if err := fn(p); err != nil {
					c.f.Close()
					return err
				}
			}
		}
		c.f.Close()
	}
	return nil
}
