package subs

import (
	"encoding/json"
	"testing"

	"github.com/ledgervenue/node/core/tickrec"
)

// codecFixtures are a small synthetic tick and real ticks from the
// generator: typical (2 books, a few hundred events) and large (3 books,
// about a thousand).
func codecFixtures() []struct {
	name string
	t    *tickrec.Tick
} {
	return []struct {
		name string
		t    *tickrec.Tick
	}{
		{"small", benchTick()},
		{"typical", genTickWith(2, 300)},
		{"large", genTickWith(3, 1000)},
	}
}

// genTickWith returns the first generated tick, over books books, with at
// least events events.
func genTickWith(books, events int) *tickrec.Tick {
	g := newTickGen(11, books, 64)
	for {
		if t := g.next(events / 2); len(t.Result.Events) >= events && len(t.Books) == books {
			return t
		}
	}
}

var tickSink []byte

func BenchmarkAppendTick(b *testing.B) {
	for _, fx := range codecFixtures() {
		b.Run(fx.name, func(b *testing.B) {
			size := len(tickrec.AppendTick(nil, fx.t))
			buf := make([]byte, 0, size)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				buf = tickrec.AppendTick(buf[:0], fx.t)
			}
			tickSink = buf
			b.ReportMetric(float64(size), "bytes/tick")
			b.ReportMetric(float64(len(fx.t.Result.Events)), "events/tick")
		})
	}
	// Baseline: encoding/json of the same typical tick.
	b.Run("typical/encoding_json", func(b *testing.B) {
		t := codecFixtures()[1].t
		enc, err := json.Marshal(t)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(enc)))
		for b.Loop() {
			tickSink, _ = json.Marshal(t)
		}
		b.ReportMetric(float64(len(enc)), "bytes/tick")
	})
}

var tickOut *tickrec.Tick

func BenchmarkDecodeTick(b *testing.B) {
	for _, fx := range codecFixtures() {
		b.Run(fx.name, func(b *testing.B) {
			enc := tickrec.AppendTick(nil, fx.t)
			b.ReportAllocs()
			b.SetBytes(int64(len(enc)))
			for b.Loop() {
				t, err := tickrec.DecodeTick(enc)
				if err != nil {
					b.Fatal(err)
				}
				tickOut = t
			}
		})
	}
}
