package bots

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	f := func(text string, want Spec) {
		t.Helper()
		got, err := ParseSpec(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", text, got, want)
		}
		again, err := ParseSpec(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("%q: String %q parses to %+v, %v", text, got.String(), again, err)
		}
	}
	f("default", DefaultSpec)
	f(" default ", DefaultSpec)
	want := DefaultSpec
	want.Makers, want.Takers, want.TakerRate, want.Levels, want.Seed = 2, 2, 5, 5, 1
	want.Markets = []string{"WETH/USD", "ETH-PERP"}
	f("makers=2,takers=2,taker-rate=5,levels=5,seed=1,markets=WETH/USD,ETH-PERP", want)
	want = DefaultSpec
	want.Markets, want.Lots, want.Transport = []string{"BTC-PERP"}, 7, "http"
	f("markets=BTC-PERP, lots=7,transport=http", want)
	want = DefaultSpec
	want.Makers, want.Takers, want.Markets = MakersMax, TakersMax, []string{"A", "B", "C", "D"}
	f("makers=8,takers=8,markets=A,B,C,D", want) // BotsMax exactly
	want = DefaultSpec
	want.Makers, want.Takers, want.QuoteEvery, want.SpreadBps, want.WalkBps, want.StartPrice = 0, TakersMax, QuoteEveryMax, SpreadBpsMax, 0, StartPriceMax
	f("makers=0,takers=8,quote-every=120,spread-bps=1000,walk-bps=0,start-price=1000000000", want)
}

// TestParseSpecErrors covers every bound and the syntax errors.
func TestParseSpecErrors(t *testing.T) {
	f := func(text, want string) {
		t.Helper()
		if _, err := ParseSpec(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: %v, want %q", text, err, want)
		}
	}
	f("", "empty bot spec")
	f(strings.Repeat("x", SpecBytesMax+1), "longer than 1024 bytes")
	f("makers", `"makers" is not key=value`)
	f("makers=1,,takers=1", `"" is not key=value`)
	f("makers=1,WETH/USD", `"WETH/USD" is not key=value`)
	f("makers=1,makers=2", "makers given twice")
	f("speed=3", `unknown key "speed"`)
	f("makers=9", "makers=\"9\": want an integer in [0, 8]")
	f("takers=9", "[0, 8]")
	f("makers=-1", "[0, 8]")
	f("levels=0", "[1, 16]")
	f("levels=17", "[1, 16]")
	f("taker-rate=51", "[1, 50]")
	f("quote-every=121", "[1, 120]")
	f("spread-bps=1001", "[1, 1000]")
	f("walk-bps=101", "[0, 100]")
	f("lots=1001", "[1, 1000]")
	f("lots=x", "[1, 1000]")
	f("start-price=0", "[1, 1000000000]")
	f("start-price=1000000001", "[1, 1000000000]")
	f("seed=-1", "unsigned 64-bit")
	f("transport=tcp", "want ws or http")
	f("markets=", "names no market")
	f("makers=0,takers=0", "no bots")
	f("makers=8,takers=8,markets=A,B,C,D,E", "80 bots, more than 64")
}

// TestPick: markets in the order named; unknown and repeated names refused.
func TestPick(t *testing.T) {
	all := []market{{Name: "A"}, {Name: "B"}, {Name: "C"}}
	got, err := pick(all, []string{"C", "A"})
	if err != nil || len(got) != 2 || got[0].Name != "C" || got[1].Name != "A" {
		t.Fatalf("pick C, A: %v, %v", got, err)
	}
	if got, _ := pick(all, nil); len(got) != 3 {
		t.Fatalf("pick all: %v", got)
	}
	if _, err := pick(all, []string{"A", "A"}); err == nil || !strings.Contains(err.Error(), "named twice") {
		t.Fatalf("pick A, A: %v", err)
	}
	if _, err := pick(all, []string{"D"}); err == nil || !strings.Contains(err.Error(), `unknown market "D"`) {
		t.Fatalf("pick D: %v", err)
	}
}
