package txgen

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

func TestDeriveKeys(t *testing.T) {
	_, a := DeriveKeys("d", "s", 1, 3)
	_, b := DeriveKeys("d", "s", 1, 3)
	_, c := DeriveKeys("d", "s", 2, 3)
	_, d := DeriveKeys("e", "s", 1, 3)
	if a[0] != b[0] || a[2] != b[2] || a[0] == a[1] || a[0] == c[0] || a[0] == d[0] {
		t.Fatalf("derivation not deterministic or not distinct: %v %v %v %v", a, b, c, d)
	}
}

func TestParallel(t *testing.T) {
	var seen [100]atomic.Int32
	if err := Parallel(len(seen), func(i int) error { seen[i].Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("index %d ran %d times", i, seen[i].Load())
		}
	}
	boom := errors.New("boom")
	if err := Parallel(10, func(i int) error {
		if i == 7 {
			return boom
		}
		return nil
	}); err != boom {
		t.Fatalf("got %v, want the failing call's error", err)
	}
}

func TestSendRawBody(t *testing.T) {
	if got := string(SendRawBody([]byte{0x02, 0xab})); got != SendRawPrefix+"02ab"+SendRawSuffix ||
		!strings.HasSuffix(got, `"]}`) {
		t.Fatalf("body %s", got)
	}
}
