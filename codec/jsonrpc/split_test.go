package jsonrpc

import (
	"bytes"
	"os"
	"testing"
)

// splitBodies are the bodies of the split test: every rule of the parser
// appears in at least one of them.
var splitBodies = []string{
	`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00112233445566778899aabbccddeeffaabbccdd","latest"]}`,
	`{"jsonrpc":"2.0","method":"eth_subscribe","params":{"a":[1.5e3,null,true,false,{"b":"\u00e9\"\\"}]}}`,
	`[{"jsonrpc":"2.0","id":"a\u0062c","method":"eth_\u0063hainId"},1,{"jsonrpc":"1.0","id":null,"method":"x"},` +
		`{"jsonrpc":"2.0","id":[],"method":"y"},{"jsonrpc":"2.0","id":-0.5e-3,"method":"z","params":7}]`,
	" \n[ {\"jsonrpc\" : \"2.0\" , \"id\" : 12345678901234567890123 , \"method\" : \"m\" } ]\r\n",
}

// TestParseSplit parses every prefix of each body (which must not panic and,
// but for trailing whitespace, must be a parse error), then the whole body
// rebuilt from the prefix and the rest, on the same Parser. The result must
// equal that of a fresh Parser on the original body.
func TestParseSplit(t *testing.T) {
	bodies := splitBodies
	for _, name := range []string{"small.json", "medium.json"} {
		body, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, string(body))
	}
	for _, body := range bodies {
		var fresh Parser
		want := render(fresh.Parse([]byte(body)))
		trimmedSize := len(bytes.TrimRight([]byte(body), " \t\r\n"))
		var p Parser
		for i := range len(body) + 1 {
			prefix := []byte(body[:i])
			if _, _, err := p.Parse(prefix); i < trimmedSize && err != ErrParse {
				t.Fatalf("prefix %q: err %v, want ErrParse", prefix, err)
			}
			joined := append(prefix[:i:i], body[i:]...)
			if got := render(p.Parse(joined)); got != want {
				t.Fatalf("split at %d of %q\n got: %s\nwant: %s", i, body, got, want)
			}
		}
	}
}
