package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/ledgervenue/node/bench/scenario"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/node"
)

// TestParseErrors: every refusal names its field (and the entry's index).
func TestParseErrors(t *testing.T) {
	f := func(text, want string) {
		t.Helper()
		_, err := scenario.Parse([]byte(text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q", text, err, want)
		}
	}
	const head = `"name": "x", "seed": 1, "duration_s": 10`
	f(`{"seed": 1, "duration_s": 10}`, "name: missing")
	f(`{"name": "`+strings.Repeat("n", scenario.NameBytesMax+1)+`", "seed": 1, "duration_s": 10}`, "name: longer than 64 bytes")
	f(`{"name": "x", "duration_s": 10}`, "seed: missing")
	f(`{"name": "x", "seed": -1, "duration_s": 10}`, "seed: want uint64, got JSON number -1")
	f(`{"name": "x", "seed": 1}`, "duration_s: missing")
	f(`{"name": "x", "seed": 1, "duration_s": 0}`, "duration_s: must be > 0")
	f(`{"name": "x", "seed": 1, "duration_s": 86401}`, "duration_s: 86401 out of [0, 86400] seconds")
	f(`{`+head+`, "colour": "red"}`, `unknown key "colour"`)
	f(`{`+head+`} {}`, "trailing data")
	f(`[]`, "want an object, got JSON array")
	f(`{`+head+`, "events": [1]}`, "events[0]: want an object, got JSON number")
	f(`{`+head+`, "pace": 101}`, "pace: 101 out of [0, 100]")
	f(`{`+head+`, "pace": "fast"}`, "pace: want float64, got JSON string")
	f(`{`+head+`, "progress_s": 0}`, "progress_s: must be > 0")
	f(`{`+head+`, "then": "loop"}`, `then: "loop" is not "serve" or "exit"`)
	f(`{`+head+`, "bots": "levels=99"}`, `bots: bot spec: levels="99": want an integer in [1, 16]`)
	f(`{`+head+`, "events": [{"at_s": 1, "method": "lab_x", "params": [], "when": 2}]}`, `events[0].unknown key "when"`)
	f(`{`+head+`, "events": [{"method": "lab_x"}]}`, "events[0].at_s: missing")
	f(`{`+head+`, "events": [{"at_s": 1}]}`, "events[0].method: missing")
	f(`{`+head+`, "events": [{"at_s": 10, "method": "lab_x"}]}`, "events[0].at_s: 10 is not before duration_s (10)")
	f(`{`+head+`, "events": [{"at_s": -1, "method": "lab_x"}]}`, "events[0].at_s: -1 out of [0, 86400] seconds")
	f(`{`+head+`, "events": [{"at_s": 5, "method": "lab_x"}, {"at_s": 2, "method": "lab_y"}]}`,
		"events[1].at_s: 2 is before events[0]'s 5: list them in time order")
	f(`{`+head+`, "events": [{"at_s": 1, "method": "evm_mine"}]}`, `events[0].method: "evm_mine" cannot be on a timeline (lab_ controls, admin_setOraclePrice, admin_deposit)`)
	f(`{`+head+`, "events": [{"at_s": 1, "method": "lab_scenario"}]}`, `events[0].method: "lab_scenario" cannot be on a timeline`)
	f(`{`+head+`, "events": [{"at_s": 1, "method": "lab_x", "params": {"count": 1}}]}`, "events[0].params: want a JSON array")
	f(`{`+head+`, "events": [{"at_s": "1", "method": "lab_x"}]}`, "events[0].at_s: want float64, got JSON string")
	f(`{`+head+`, "oracle": [{"at_s": 1, "price": "2000"}]}`, "oracle[0].market: missing")
	f(`{`+head+`, "oracle": [{"at_s": 1, "market": "ETH-PERP"}]}`, "oracle[0].price: missing")
	f(`{`+head+`, "oracle": [{"at_s": 1, "market": "ETH-PERP", "price": "0"}]}`, `oracle[0].price: "0" out of (0, 1000000000000]`)
	f(`{`+head+`, "oracle": [{"at_s": 1, "market": "ETH-PERP", "price": "1e3"}]}`, `oracle[0].price: "1e3" is not a decimal number`)
	f(`{`+head+`, "oracle": [{"at_s": 1, "market": "ETH-PERP", "price": "2000000000000.5"}]}`, "out of (0, 1000000000000]")
	f(`{`+head+`, "oracle": [{"at_s": 1, "market": "ETH-PERP", "price": 2000}]}`, "oracle[0].price: want string, got JSON number")
	f(`{`+head+`, "oracle_walk": [{"market": "ETH-PERP", "bps": 0, "every_s": 1}]}`, "oracle_walk[0].bps: want an integer in [1, 1000]")
	f(`{`+head+`, "oracle_walk": [{"market": "ETH-PERP", "bps": 5}]}`, "oracle_walk[0].every_s: missing")
	f(`{`+head+`, "oracle_walk": [{"market": "ETH-PERP", "bps": 5, "every_s": 0}]}`, "oracle_walk[0].every_s: must be > 0")
	f(`{`+head+`, "oracle_walk": [{"bps": 5, "every_s": 1}]}`, "oracle_walk[0].market: missing")
	f(`{`+head+`, "oracle_walk": [{"market": "ETH-PERP", "bps": 5, "every_s": 1, "seed": 2}]}`, `oracle_walk[0].unknown key "seed"`)
	f(`{`+head+`, "oracle_walk": [{"market": "ETH-PERP", "bps": 5, "every_s": 1}, {"market": "ETH-PERP", "bps": 9, "every_s": 2}]}`,
		"oracle_walk[1].market: ETH-PERP walks already (oracle_walk[0])")
	f(`{`+head+`, "oracle_walk": [`+strings.Repeat(`{"market": "ETH-PERP", "bps": 5, "every_s": 1}, `, scenario.WalksMax)+`{}]}`,
		"oracle_walk: 17 walks, more than 16")
	f(strings.Repeat(" ", scenario.FileBytesMax+1), "scenario file larger than 1048576 bytes")
	var many strings.Builder
	many.WriteString(`{` + head + `, "events": [`)
	for i := range scenario.TimelineMax + 1 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`{"at_s": 1, "method": "lab_x"}`)
	}
	many.WriteString("]}")
	f(many.String(), "oracle and events: 10001 entries, more than 10000")
}

// TestParseDefaults: what a minimal file means, and a spec's seed.
func TestParseDefaults(t *testing.T) {
	sc, err := scenario.Parse([]byte(`{"name": "x", "seed": 42, "duration_s": 1.5, "events": [{"at_s": 0.25, "method": "lab_skipAuction"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if sc.DurationUs != 1_500_000 || sc.Pace != 1 || sc.ProgressUs != 10_000_000 || sc.Exit || sc.Bots == nil ||
		sc.Bots.Seed != 42 || sc.Bots.Makers != 1 || string(sc.Events[0].Params) != "[]" || sc.Events[0].AtUs != 250_000 {
		t.Fatalf("%+v, bots %+v", sc, sc.Bots)
	}
	sc, err = scenario.Parse([]byte(`{"name": "x", "seed": 42, "duration_s": 1, "bots": "takers=3,seed=5", "then": "exit"}`))
	if err != nil || sc.Bots.Seed != 5 || sc.Bots.Takers != 3 || !sc.Exit {
		t.Fatalf("%+v %v", sc, err)
	}
	if sc, err = scenario.Parse([]byte(`{"name": "x", "seed": 42, "duration_s": 1, "bots": "none"}`)); err != nil || sc.Bots != nil {
		t.Fatalf("bots none: %+v %v", sc, err)
	}
}

// TestExampleFiles: the files under docs/scenarios parse, and their oracle
// points name dev perp markets.
func TestExampleFiles(t *testing.T) {
	files, _ := filepath.Glob("../../docs/scenarios/*.json")
	if len(files) == 0 {
		t.Fatal("no docs/scenarios/*.json")
	}
	lookup := func(name string) *scenario.Market {
		for _, m := range append(node.DevMarkets(), node.DevPerpMarkets()...) {
			if m.Name == name {
				return &scenario.Market{ID: common.Hash(m.ID), Perp: m.Kind == clob.Perp, Step: m.TickPrecision}
			}
		}
		return nil
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scenario.Parse(data)
		if err == nil {
			_, err = scenario.Check(sc, lookup)
		}
		if err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}
