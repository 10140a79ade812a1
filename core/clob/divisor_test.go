package clob

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestDivisor checks divRem against the hardware division on random and
// edge operands, for divisors of every bit length.
func TestDivisor(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := []uint64{1, 2, 3, 7, 10, 1_000_000, 1_000_000_000_000_000_000, 1 << 63, 1<<63 + 1, ^uint64(0), ^uint64(0) - 1}
	for i := 0; i < 64; i++ {
		ds = append(ds, 1<<i, (1<<i)+1, rng.Uint64()>>i|1)
	}
	for _, d := range ds {
		x := newDivisor(d)
		his := []uint64{0, d - 1, d / 2}
		los := []uint64{0, 1, d - 1, d, d + 1, ^uint64(0)}
		for range 200 {
			his = append(his, rng.Uint64()%d)
			los = append(los, rng.Uint64())
		}
		for _, hi := range his {
			for _, lo := range los {
				q, r := x.divRem(hi, lo)
				wq, wr := bits.Div64(hi, lo, d)
				if q != wq || r != wr {
					t.Fatalf("%#x:%#x / %#x = %#x r %#x, want %#x r %#x", hi, lo, d, q, r, wq, wr)
				}
			}
		}
	}
}
