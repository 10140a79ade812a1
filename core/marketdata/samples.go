package marketdata

import (
	"bytes"
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/binread"
	"github.com/ledgervenue/node/core/clob"
)

// Book samples: what the strategy report (report.go) needs of a market
// that the rest of the index does not keep. After each tick, for each
// book that ran in it, Tick samples the book (clob.Engine.SampleBook): its
// reference price, a perp market's funding index, and the owners of the
// orders resting at the best bid and at the best ask. A sample is kept
// only when it differs from the book's previous one, so a quiet book
// costs nothing; a tick's post-state holds until the book's next tick.
// The samples are part of the index's snapshot (doc.go), so they are
// built by the same Tick a replay runs and survive a restart.

const (
	// SamplesPerBook bounds the samples kept per book; past it the oldest
	// is forgotten (a report reaching before the oldest is refused).
	SamplesPerBook = 16384
	// TopOwnersMax bounds the owners kept per side of a sample: the first
	// TopOwnersMax distinct owners in queue order at the best price; the
	// others do not count as at the top for that tick.
	TopOwnersMax = 16
)

// sampleFixedSize is a sample's encoded size without its owners.
const sampleFixedSize = 8 + u256Size + 1 + u256Size + 1 + 1

// Sampler is what Tick reads of the engine to sample a book;
// *clob.Engine implements it. A Live that does not leaves the books
// unsampled (the strategy report then has no reference).
type Sampler interface {
	SampleBook(book clob.Hash, owners *[2][]clob.Address, max int) (clob.BookSample, bool)
}

// Sample is one book's state after a tick, kept when it changed.
type Sample struct {
	TickUs  int64
	Ref2    uint256.Int // twice the reference price (clob.BookSample); zero: none
	Funding clob.Signed // perp: funding index, quote wei per lot; zero on spot
	// Top holds the owners at the best bid (Top[clob.Buy]) and best ask
	// (Top[clob.Sell]), ascending by address, at most TopOwnersMax each.
	Top [2][]clob.Address
}

// equal reports whether s holds the same state as the book sample and
// owners (sorted) given.
func (s *Sample) equal(bs *clob.BookSample, top *[2][]clob.Address) bool {
	return s.Ref2.Eq(&bs.Ref2) && s.Funding.Neg == bs.Funding.Neg && s.Funding.Abs.Eq(&bs.Funding.Abs) &&
		slices.Equal(s.Top[clob.Buy], top[clob.Buy]) && slices.Equal(s.Top[clob.Sell], top[clob.Sell])
}

// sample records book b's state after the tick at tickUs when it changed.
// Owners' slices are reused from the sample the ring drops, so a full
// ring allocates nothing.
func (x *Index) sample(b *book, tickUs int64) {
	sm, ok := x.live.(Sampler)
	if !ok {
		return
	}
	bs, ok := sm.SampleBook(b.cfg.ID, &x.topScratch, TopOwnersMax)
	if !ok {
		return
	}
	for side := range x.topScratch {
		slices.SortFunc(x.topScratch[side], compareAddress)
	}
	r := &b.samples
	if n := r.len(); n > 0 && r.at(n-1).equal(&bs, &x.topScratch) {
		return
	}
	var s *Sample
	if r.len() < SamplesPerBook {
		r.buf = append(r.buf, Sample{})
		s = &r.buf[len(r.buf)-1]
	} else {
		s = &r.buf[r.start]
		r.start = (r.start + 1) % len(r.buf)
	}
	s.TickUs, s.Ref2, s.Funding = tickUs, bs.Ref2, bs.Funding
	for side := range s.Top {
		s.Top[side] = append(s.Top[side][:0], x.topScratch[side]...)
	}
}

// Samples calls fn with each kept sample of a book, oldest first; fn
// returns false to stop. The pointers are valid until the next Tick.
func (x *Index) Samples(book clob.Hash, fn func(s *Sample) bool) {
	b := x.books[book]
	if b == nil {
		return
	}
	for i := range b.samples.len() {
		if !fn(b.samples.at(i)) {
			return
		}
	}
}

func (s *Sample) size() int { return sampleFixedSize + 20*(len(s.Top[0])+len(s.Top[1])) }

// samplesSize is the encoded size of the samples' part of the snapshot.
func (x *Index) samplesSize() int {
	size := 4
	for _, id := range x.bookIDs {
		r := &x.books[id].samples
		if r.len() > 0 {
			size += 32 + 4
		}
		for i := range r.len() {
			size += r.at(i).size()
		}
	}
	return size
}

// appendSamples writes the books that have samples, ascending by id,
// each with its samples oldest first (layout in doc.go).
func (x *Index) appendSamples(dst []byte) []byte {
	n := 0
	for _, id := range x.bookIDs {
		if x.books[id].samples.len() > 0 {
			n++
		}
	}
	dst = appendCount(dst, n)
	for _, id := range x.bookIDs {
		r := &x.books[id].samples
		if r.len() == 0 {
			continue
		}
		dst = append(dst, id[:]...)
		dst = appendCount(dst, r.len())
		for i := range r.len() {
			s := r.at(i)
			dst = appendI64(dst, s.TickUs)
			dst = binread.AppendU256(dst, &s.Ref2)
			dst = appendBool(dst, s.Funding.Neg)
			dst = binread.AppendU256(dst, &s.Funding.Abs)
			for _, top := range s.Top {
				dst = append(dst, byte(len(top)))
				for _, a := range top {
					dst = append(dst, a[:]...)
				}
			}
		}
	}
	return dst
}

// loadSamples reads the samples and checks them as Load promises: known
// books ascending, 1 to SamplesPerBook samples each, times ascending
// within [0, now], no funding on a spot book, no negative zero, at most
// TopOwnersMax owners a side, ascending.
func (x *Index) loadSamples(d *decoder) {
	n := d.Count(32 + 4 + sampleFixedSize)
	var prev clob.Hash
	for i := 0; i < n && d.Err == nil; i++ {
		var id clob.Hash
		copy(id[:], d.Take(32))
		b := x.books[id]
		rows := d.Count(sampleFixedSize)
		switch {
		case d.Err != nil:
			return
		case b == nil:
			d.Fail("samples %d: unknown book %x", i, id)
			return
		case i > 0 && compareHash(prev, id) >= 0:
			d.Fail("samples %d: books not ascending by id", i)
			return
		case rows == 0 || rows > SamplesPerBook:
			d.Fail("samples of %x: %d, want 1 to SamplesPerBook", id, rows)
			return
		}
		prev = id
		b.samples.buf = make([]Sample, rows)
		for j := range b.samples.buf {
			s := &b.samples.buf[j]
			x.loadSample(d, b, s)
			if d.Err == nil && j > 0 && b.samples.buf[j-1].TickUs >= s.TickUs {
				d.Fail("samples of %x: times not ascending", id)
			}
		}
	}
}

func (x *Index) loadSample(d *decoder, b *book, s *Sample) {
	s.TickUs = d.i64()
	d.U256(&s.Ref2)
	s.Funding.Neg = d.bool()
	d.U256(&s.Funding.Abs)
	for side := range s.Top {
		k := int(d.U8())
		if d.Err == nil && k > TopOwnersMax {
			d.Fail("sample at %d: %d owners, more than TopOwnersMax", s.TickUs, k)
		}
		if d.Err != nil {
			return
		}
		if k > 0 {
			s.Top[side] = make([]clob.Address, k)
		}
		for i := range s.Top[side] {
			copy(s.Top[side][i][:], d.Take(20))
			if i > 0 && bytes.Compare(s.Top[side][i-1][:], s.Top[side][i][:]) >= 0 {
				d.Fail("sample at %d: owners not ascending", s.TickUs)
			}
		}
	}
	switch {
	case d.Err != nil:
	case s.TickUs < 0 || s.TickUs > x.nowUs:
		d.Fail("sample at %d: time outside [0, now %d]", s.TickUs, x.nowUs)
	case b.cfg.Kind != clob.Perp && !s.Funding.Abs.IsZero():
		d.Fail("sample at %d: funding on a spot book", s.TickUs)
	case !canonicalSigned(&s.Funding):
		d.Fail("sample at %d: negative zero", s.TickUs)
	}
}
