package jsonrpc

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/valyala/fastjson"
)

// sink keeps results alive so the compiler cannot drop the work.
var sink int

func fixture(b *testing.B, name string) []byte {
	b.Helper()
	body, err := os.ReadFile("testdata/" + name)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

var fixtureNames = []string{"small", "medium", "large"}

func BenchmarkParse(b *testing.B) {
	for _, name := range fixtureNames {
		b.Run(name, func(b *testing.B) {
			body := fixture(b, name+".json")
			var p Parser
			p.Parse(body) // b.Loop resets the counters after this warm-up.
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				reqs, _, err := p.Parse(body)
				if err != nil {
					b.Fatal(err)
				}
				sink += len(reqs)
			}
		})
	}
}

// stdRequest is the encoding/json equivalent of Request.
type stdRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// BenchmarkParseStd is the encoding/json baseline, reusing its slice.
func BenchmarkParseStd(b *testing.B) {
	for _, name := range fixtureNames {
		b.Run(name, func(b *testing.B) {
			body := fixture(b, name+".json")
			var reqs []stdRequest
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				reqs = reqs[:0]
				var err error
				if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
					err = json.Unmarshal(body, &reqs)
				} else {
					reqs = append(reqs, stdRequest{})
					err = json.Unmarshal(body, &reqs[0])
				}
				if err != nil {
					b.Fatal(err)
				}
				sink += len(reqs)
			}
		})
	}
}

// BenchmarkValidJSON is the strictness pass of Parse on its own.
func BenchmarkValidJSON(b *testing.B) {
	for _, name := range fixtureNames {
		b.Run(name, func(b *testing.B) {
			body := fixture(b, name+".json")
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := validJSON(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFastjsonParse is fastjson alone, the floor under Parse.
func BenchmarkFastjsonParse(b *testing.B) {
	for _, name := range fixtureNames {
		b.Run(name, func(b *testing.B) {
			body := fixture(b, name+".json")
			var p fastjson.Parser
			p.ParseBytes(body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				v, err := p.ParseBytes(body)
				if err != nil {
					b.Fatal(err)
				}
				sink += int(v.Type())
			}
		})
	}
}

// BenchmarkGetBalance is the whole request path of TestSteadyStateAllocs.
func BenchmarkGetBalance(b *testing.B) {
	body := fixture(b, "small.json")
	var p Parser
	var out []byte
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		reqs, _, _ := p.Parse(body)
		addr, _ := ParseAddress(reqs[0].Param(0))
		out = AppendResultPrefix(out[:0], reqs[0].ID)
		out = AppendQuantity(out, uint64(addr[0]))
		out = AppendResultSuffix(out)
	}
	sink += len(out)
}
