package jsonrpc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// render describes a Parse result as text, for comparisons. Each request is
// {id=<raw id or -> m=<method> p=<params or ->} or {id=... invalid=<code>}.
func render(reqs []Request, batch bool, err *Error) string {
	if err != nil {
		return "err " + strconv.Itoa(err.Code) + " " + err.Message
	}
	var b []byte
	if batch {
		b = append(b, "batch "...)
	}
	for i := range reqs {
		r := &reqs[i]
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, "{id="...)
		if r.ID == nil {
			b = append(b, '-')
		}
		b = append(b, r.ID...)
		if r.Invalid != nil {
			b = append(b, " invalid="...)
			b = strconv.AppendInt(b, int64(r.Invalid.Code), 10)
			b = append(b, '}')
			continue
		}
		b = append(b, " m="...)
		b = append(b, r.Method...)
		b = append(b, " p="...)
		if r.Params == nil {
			b = append(b, '-')
		} else {
			b = r.Params.MarshalTo(b)
		}
		b = append(b, '}')
	}
	return string(b)
}

func parseRender(p *Parser, body string) string {
	return render(p.Parse([]byte(body)))
}

func TestParseSingle(t *testing.T) {
	var p Parser
	f := func(body, want string) {
		t.Helper()
		if got := parseRender(&p, body); got != want {
			t.Fatalf("Parse(%q)\n got: %s\nwant: %s", body, got, want)
		}
	}
	f(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`, `{id=1 m=eth_chainId p=-}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0xab","latest"]}`,
		`{id=1 m=eth_getBalance p=["0xab","latest"]}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,{"b":null}]}}`, `{id=1 m=m p={"a":[1,{"b":null}]}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"m","params":[]}`, `{id=1 m=m p=[]}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`, `{id=1 m=m p={}}`)

	// Member order, whitespace, unknown members.
	f(`{"params":[1],"method":"m","id":2,"jsonrpc":"2.0"}`, `{id=2 m=m p=[1]}`)
	f(" \r\n\t{ \"jsonrpc\" : \"2.0\" ,\n\"id\"\t:\t3 , \"method\" : \"m\" } \n", `{id=3 m=m p=-}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"m","extra":{"x":[true]}}`, `{id=1 m=m p=-}`)

	// Duplicate members: the last one wins.
	f(`{"jsonrpc":"2.0","id":1,"id":"two","method":"a","method":"b"}`, `{id="two" m=b p=-}`)
	f(`{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"a"}`, `{id=1 m=a p=-}`)
	f(`{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"a"}`, `{id=1 invalid=-32600}`)

	// Escapes: in keys and method they are decoded; ids stay raw.
	f(`{"jsonrpc":"2.0","\u0069d":7,"m\u0065thod":"a"}`, `{id=7 m=a p=-}`)
	f(`{"jsonrpc":"2\u002e0","id":1,"method":"eth_\u0063hainId"}`, `{id=1 m=eth_chainId p=-}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"\ud83d\ude00\u00e9\n\"\\\/"}`, "{id=1 m=😀é\n\"\\/ p=-}")
	f(`{"jsonrpc":"2.0","id":"\u00e9\"\\","method":"a"}`, `{id="\u00e9\"\\" m=a p=-}`)
	f(`{"jsonrpc":"2.0","id":"é😀","method":"a"}`, `{id="é😀" m=a p=-}`)
}

func TestParseID(t *testing.T) {
	var p Parser
	f := func(id, want string) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"m"}`
		got := parseRender(&p, body)
		if want != "invalid" {
			want = "{id=" + want + " m=m p=-}"
		} else {
			want = "{id=- invalid=-32600}"
		}
		if got != want {
			t.Fatalf("id %q\n got: %s\nwant: %s", id, got, want)
		}
	}
	// Echoed byte for byte.
	for _, id := range []string{
		`0`, `1`, `-0`, `-1`, `1.5e3`, `1.5E+3`, `0.1e-7`, `9007199254740993`,
		`123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890`,
		`"abc"`, `""`, `"0x1"`, `"\u0041"`, `"\ud83d\ude00"`, `"a\/b"`, `null`,
	} {
		f(id, id)
	}
	f(" 7 ", "7")
	// Types JSON-RPC does not allow.
	for _, id := range []string{`{}`, `{"a":1}`, `[]`, `[1]`, `true`, `false`} {
		f(id, "invalid")
	}
}

func TestParseInvalidRequest(t *testing.T) {
	var p Parser
	f := func(body, want string) {
		t.Helper()
		if got := parseRender(&p, body); got != want {
			t.Fatalf("Parse(%q)\n got: %s\nwant: %s", body, got, want)
		}
	}
	// "jsonrpc" missing or not the string "2.0".
	f(`{"id":1,"method":"m"}`, `{id=1 invalid=-32600}`)
	f(`{"jsonrpc":"1.0","id":1,"method":"m"}`, `{id=1 invalid=-32600}`)
	f(`{"jsonrpc":2.0,"id":1,"method":"m"}`, `{id=1 invalid=-32600}`)
	f(`{"jsonrpc":"2.0 ","id":1,"method":"m"}`, `{id=1 invalid=-32600}`)
	f(`{"jsonrpc":null,"id":"x","method":"m"}`, `{id="x" invalid=-32600}`)
	// "method" missing or not a string.
	f(`{"jsonrpc":"2.0","id":1}`, `{id=1 invalid=-32600}`)
	f(`{"jsonrpc":"2.0","id":1,"method":1}`, `{id=1 invalid=-32600}`)
	f(`{"jsonrpc":"2.0","id":1,"method":null}`, `{id=1 invalid=-32600}`)
	f(`{"jsonrpc":"2.0","id":1,"method":["m"]}`, `{id=1 invalid=-32600}`)
	// "params": null counts as absent (geth); other non-structured params are invalid.
	f(`{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, `{id=1 m=m p=-}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`, `{id=1 invalid=-32600}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"m","params":1}`, `{id=1 invalid=-32600}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"m","params":true}`, `{id=1 invalid=-32600}`)
	// Invalid without id: still answered, with id null.
	f(`{"jsonrpc":"2.0","method":1}`, `{id=- invalid=-32600}`)
	f(`{}`, `{id=- invalid=-32600}`)
	// Notification: valid and without id.
	f(`{"jsonrpc":"2.0","method":"m","params":[1]}`, `{id=- m=m p=[1]}`)
}

func TestParseBody(t *testing.T) {
	var p Parser
	f := func(body, want string) {
		t.Helper()
		if got := parseRender(&p, body); got != want {
			t.Fatalf("Parse(%q)\n got: %s\nwant: %s", body, got, want)
		}
	}
	const parseErr = "err -32700 Parse error"
	const req = `{"jsonrpc":"2.0","id":1,"method":"m"}`
	for _, body := range []string{
		``, ` `, "\n\t", `{`, `[`, `}`, `{"jsonrpc":"2.0"`, `[` + req, `[` + req + `,]`,
		req + `x`, req + req, req + `,`, req + `]`, `{"a" 1}`, `{'a':1}`, `{a:1}`,
		"\ufeff" + req, `[1,,2]`, `{"a":1,}`, `tru`, `nul`,
	} {
		f(body, parseErr)
	}
	// Text that fastjson alone would accept.
	for _, id := range []string{
		`NaN`, `nan`, `Inf`, `-Inf`, `inf`, `01`, `-01`, `1-2`, `+1`, `.5`, `1.`, `1e`, `1e+`, `-`,
		`--1`, `1.2.3`, "\"a\nb\"", "\"\x01\"", `"\x"`, `"\u12"`, `"\u12g4"`, `"\'"`,
	} {
		f(`{"jsonrpc":"2.0","id":`+id+`,"method":"m"}`, parseErr)
		f(`{"jsonrpc":"2.0","id":1,"method":"m","params":[`+id+`]}`, parseErr)
	}
	f("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\tb\"}", parseErr)
	// Not UTF-8: the id would make our response invalid text.
	f("{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}", parseErr)
	f("{\"jsonrpc\":\"2.0\",\"id\":\"a\xc3\",\"method\":\"m\"}", parseErr)
	f("{\"jsonrpc\":\"2.0\",\"id\":1,\"k\x01\":1,\"method\":\"m\"}", parseErr)

	// Top level neither object nor array.
	for _, body := range []string{`1`, `"x"`, `null`, `true`, `false`, ` -1.5e3 `} {
		f(body, "err -32600 Invalid Request")
	}
	f(`[]`, "err -32600 empty batch")
	f(" [ \n ] ", "err -32600 empty batch")
	f(req+" \r\n\t", `{id=1 m=m p=-}`)
}

func TestParseBatch(t *testing.T) {
	var p Parser
	f := func(body, want string) {
		t.Helper()
		if got := parseRender(&p, body); got != want {
			t.Fatalf("Parse(%q)\n got: %s\nwant: %s", body, got, want)
		}
	}
	f(`[{"jsonrpc":"2.0","id":1,"method":"a"}]`, `batch {id=1 m=a p=-}`)
	f(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":"x","method":"b","params":[2]}]`,
		`batch {id=1 m=a p=-} {id="x" m=b p=[2]}`)
	// Notifications stay in the batch; the caller writes nothing for them.
	f(`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]`, `batch {id=- m=a p=-} {id=- m=b p=-}`)
	// Elements that are not objects, invalid objects and valid ones mixed.
	f(`[1,{"jsonrpc":"2.0","id":1,"method":"a"},"x",{"foo":"bar"},[],null,`+
		`{"jsonrpc":"2.0","id":[1],"method":"a"},{"jsonrpc":"2.0","id":3,"method":"c","params":7},`+
		`{"jsonrpc":"2.0","method":"n"},[{"jsonrpc":"2.0","id":4,"method":"d"}]]`,
		`batch {id=- invalid=-32600} {id=1 m=a p=-} {id=- invalid=-32600} {id=- invalid=-32600} `+
			`{id=- invalid=-32600} {id=- invalid=-32600} {id=- invalid=-32600} {id=3 invalid=-32600} `+
			`{id=- m=n p=-} {id=- invalid=-32600}`)
	// Duplicate ids are the caller's business; they are all returned.
	f(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":1,"method":"a"}]`,
		`batch {id=1 m=a p=-} {id=1 m=a p=-}`)
}

// batchBody returns a batch of n requests with ids 1..n.
func batchBody(n int, params string) []byte {
	b := []byte{'['}
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, `,"method":"m","params":`...)
		b = append(b, params...)
		b = append(b, '}')
	}
	return append(b, ']')
}

func TestParseBatchLimit(t *testing.T) {
	var p Parser
	reqs, batch, err := p.Parse(batchBody(BatchLimit, "[]"))
	if err != nil || !batch || len(reqs) != BatchLimit {
		t.Fatalf("batch of BatchLimit: err %v, batch %v, %d requests", err, batch, len(reqs))
	}
	if got := string(reqs[BatchLimit-1].ID); got != strconv.Itoa(BatchLimit) {
		t.Fatalf("last id %s", got)
	}
	reqs, batch, err = p.Parse(batchBody(BatchLimit+1, "[]"))
	if err != ErrBatchTooLarge || !batch || reqs != nil {
		t.Fatalf("batch of BatchLimit+1: err %v, batch %v, %d requests", err, batch, len(reqs))
	}
}

func TestParseDepthMax(t *testing.T) {
	var p Parser
	// The request object is at depth 1, params at 2; every value counts.
	f := func(params string, want *Error) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"m","params":` + params + `}`
		if _, _, err := p.Parse([]byte(body)); err != want {
			t.Fatalf("params of %d bytes: err %v, want %v", len(params), err, want)
		}
	}
	// nested returns params holding inner at the given depth.
	nested := func(depth int, inner string) string {
		return strings.Repeat("[", depth-2) + inner + strings.Repeat("]", depth-2)
	}
	f(nested(DepthMax, "[]"), nil)
	f(nested(DepthMax+1, "[]"), ErrTooDeep)
	f(nested(DepthMax, `1`), nil)
	f(nested(DepthMax+1, `1`), ErrTooDeep)
	f(nested(DepthMax, `{}`), nil)
	f(nested(DepthMax, `{"k":"v"}`), ErrTooDeep)
	// Very deep input fails fast, without deep recursion, naming the limit.
	if _, _, err := p.Parse(bytes.Repeat([]byte{'['}, 1<<20)); err != ErrTooDeep {
		t.Fatalf("1 MiB of '[': %v", err)
	}
	if ErrTooDeep.Code != CodeInvalidRequest || ErrTooDeep.Message != "JSON nested too deep (max 300 levels)" {
		t.Fatalf("ErrTooDeep = %d %q", ErrTooDeep.Code, ErrTooDeep.Message)
	}
}

func TestParseHugeNumbers(t *testing.T) {
	var p Parser
	huge := "1" + strings.Repeat("0", 400)
	body := `{"jsonrpc":"2.0","id":` + huge + `,"method":"m","params":[` + huge + `,-` + huge + `e-999999]}`
	want := "{id=" + huge + " m=m p=[" + huge + ",-" + huge + "e-999999]}"
	if got := parseRender(&p, body); got != want {
		t.Fatalf("got %s", got)
	}
}

func TestParseDoesNotRetainBody(t *testing.T) {
	var p Parser
	body := []byte(`[{"jsonrpc":"2.0","id":"abc","method":"eth_x","params":["0x01"]},{"jsonrpc":"2.0","id":2,"method":"y"}]`)
	reqs, batch, err := p.Parse(body)
	for i := range body {
		body[i] = 'X'
	}
	const want = `batch {id="abc" m=eth_x p=["0x01"]} {id=2 m=y p=-}`
	if got := render(reqs, batch, err); got != want {
		t.Fatalf("got %s", got)
	}
}

func TestParseReuse(t *testing.T) {
	var p Parser
	f := func(body, want string) {
		t.Helper()
		if got := parseRender(&p, body); got != want {
			t.Fatalf("Parse(%q)\n got: %s\nwant: %s", body, got, want)
		}
	}
	// A long body, then shorter ones: nothing of an earlier body may show.
	f(`[{"jsonrpc":"2.0","id":"long-id","method":"long_method","params":[1,2,3]},{"jsonrpc":"2.0","id":2,"method":"b"}]`,
		`batch {id="long-id" m=long_method p=[1,2,3]} {id=2 m=b p=-}`)
	f(`{"jsonrpc":"2.0","method":"c"}`, `{id=- m=c p=-}`)
	f(`{`, "err -32700 Parse error")
	f(`[{"jsonrpc":"2.0","id":9,"method":"d"}]`, `batch {id=9 m=d p=-}`)
}

func TestParseReleasesLargeBuffers(t *testing.T) {
	small := []byte(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	// Each body is a full batch, so cap(p.reqs) shows whether the buffers
	// of the body before were kept.
	f := func(body []byte, wantKept bool) {
		t.Helper()
		var p Parser
		if _, _, err := p.Parse(body); err != nil {
			t.Fatal(err)
		}
		reqs, _, err := p.Parse(small)
		if err != nil || len(reqs) != 1 || string(reqs[0].ID) != "1" {
			t.Fatalf("after a body of %d bytes: %v", len(body), err)
		}
		if kept := cap(p.reqs) >= BatchLimit; kept != wantKept {
			t.Fatalf("body of %d bytes, %d values: kept %v, want %v", len(body), p.valuesCountLast, kept, wantKept)
		}
	}
	// Values: a request with n zeros in params holds 5+n values, and the
	// batch array is one more.
	zeros := func(n int) string { return "[" + strings.Repeat("0,", n-1) + "0]" }
	perRequestMax := valuesCountRetainMax/BatchLimit - 5
	f(batchBody(BatchLimit, zeros(perRequestMax)), true)
	f(batchBody(BatchLimit, zeros(perRequestMax+1)), false)
	// Size.
	hex := `"0x` + strings.Repeat("ab", 450) + `"`
	f(batchBody(BatchLimit, "["+hex+"]"), true)
	if size := len(batchBody(BatchLimit, "["+hex+","+hex+"]")); size <= bodySizeRetainMax {
		t.Fatalf("test body of %d bytes is not above bodySizeRetainMax", size)
	}
	f(batchBody(BatchLimit, "["+hex+","+hex+"]"), false)
}

func TestRequestAccessors(t *testing.T) {
	var p Parser
	reqs, _, err := p.Parse([]byte(`[{"jsonrpc":"2.0","id":1,"method":"a","params":["x",2]},` +
		`{"jsonrpc":"2.0","method":"b","params":{"k":1}},{"jsonrpc":"2.0","id":null,"method":"c"},` +
		`{"jsonrpc":"2.0","method":5}]`))
	if err != nil {
		t.Fatal(err)
	}
	f := func(r *Request, count int, notification bool) {
		t.Helper()
		if got := r.ParamsCount(); got != count {
			t.Fatalf("ParamsCount %d, want %d", got, count)
		}
		if got := r.IsNotification(); got != notification {
			t.Fatalf("IsNotification %v, want %v", got, notification)
		}
		for _, i := range []int{-1, count, count + 1, int(^uint(0) >> 1)} {
			if r.Param(i) != nil {
				t.Fatalf("Param(%d) not nil", i)
			}
		}
	}
	f(&reqs[0], 2, false)
	f(&reqs[1], 0, true)
	f(&reqs[2], 0, false)
	f(&reqs[3], 0, false)
	if s := reqs[0].Param(0).String(); s != `"x"` {
		t.Fatalf("Param(0) %s", s)
	}
	if s := reqs[0].Param(1).String(); s != `2` {
		t.Fatalf("Param(1) %s", s)
	}
}

func TestParseFixtures(t *testing.T) {
	var p Parser
	f := func(name string, count int) {
		t.Helper()
		body, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		reqs, _, perr := p.Parse(body)
		if perr != nil || len(reqs) != count {
			t.Fatalf("%s: err %v, %d requests, want %d", name, perr, len(reqs), count)
		}
		for i := range reqs {
			if reqs[i].Invalid != nil || reqs[i].ID == nil || len(reqs[i].Method) == 0 {
				t.Fatalf("%s: request %d: %s", name, i, render(reqs[i:i+1], false, nil))
			}
		}
	}
	f("small.json", 1)
	f("medium.json", 24)
	f("large.json", 1000)
}

// TestParsersConcurrent runs one Parser per goroutine, as event loops do,
// so that -race can see the state they share: sentinels, the number
// scratch pool, fastjson's shared null and boolean values.
func TestParsersConcurrent(t *testing.T) {
	medium, err := os.ReadFile("testdata/medium.json")
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`[{"jsonrpc":"2.0","id":null,"method":"m","params":[12345,true,false,null,"0x1"]},{"id":[]}]`)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var p Parser
			var out []byte
			for range 200 {
				if _, _, err := p.Parse(medium); err != nil {
					t.Error(err)
					return
				}
				reqs, _, _ := p.Parse(body)
				x, _ := ParseQuantity(reqs[0].Param(0))
				_, perr := ParseAddress(reqs[0].Param(1))
				out = AppendError(out[:0], reqs[0].ID, perr)
				out = AppendError(out, reqs[1].ID, reqs[1].Invalid)
				out = AppendQuantity(out, x)
			}
		})
	}
	wg.Wait()
}

// TestParseValuesMax: a body of ValuesMax values parses; one more is
// refused by the validator, before fastjson builds any value, so refusing
// a body of a million numbers or a 100 000-call batch allocates nothing.
func TestParseValuesMax(t *testing.T) {
	body := func(values int) []byte { // the request object, its 3 members, the params array, then zeros
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":[` + strings.Repeat("0,", values-6) + `0]}`)
	}
	var p Parser
	if reqs, _, err := p.Parse(body(ValuesMax)); err != nil || reqs[0].ParamsCount() != ValuesMax-5 {
		t.Fatalf("ValuesMax values: %v", err)
	}
	if _, _, err := p.Parse(body(ValuesMax + 1)); err != ErrTooManyValues {
		t.Fatalf("ValuesMax+1 values: %v, want ErrTooManyValues", err)
	}
	million := body(1_000_000)
	huge := batchBody(100_000, "[]")
	var errs [2]*Error
	allocs := testing.AllocsPerRun(3, func() {
		_, _, errs[0] = p.Parse(million)
		_, _, errs[1] = p.Parse(huge)
	})
	if errs[0] != ErrTooManyValues || errs[1] != ErrBatchTooLarge || allocs != 0 {
		t.Fatalf("a million values: %v; 100 000 calls: %v; %v allocations, want 0", errs[0], errs[1], allocs)
	}
}
