package subs

import (
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

func TestParseSpecErrors(t *testing.T) {
	f := func(typ, params, wantData string) {
		t.Helper()
		var v *fastjson.Value
		if params != "" {
			v = fastjson.MustParse(params)
		}
		_, err := parseSpec([]byte(typ), v)
		if wantData == "" {
			if err != nil {
				t.Fatalf("%s %s: unexpected error %v", typ, params, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("%s %s: want error containing %q", typ, params, wantData)
		}
		if err.Code != -32602 || !strings.Contains(string(err.Data), wantData) {
			t.Fatalf("%s %s: got %d %s, want -32602 containing %q", typ, params, err.Code, err.Data, wantData)
		}
	}
	book := `"0x` + strings.Repeat("01", 32) + `"`
	a1 := `"0x` + strings.Repeat("11", 20) + `"`
	a2 := `"0x` + strings.Repeat("22", 20) + `"`
	// Types.
	f("svc_nope", `{}`, "unknown subscription type")
	f("", ``, "unknown subscription type")
	f("SVC_ORDERBOOK", `{}`, "unknown subscription type")
	for c := ChannelOrderbook; c < channelEnd; c++ {
		switch c {
		case ChannelPositions, ChannelTriggers, ChannelAccountReceipts, ChannelPastPerfectTime:
			continue
		}
		f(c.String(), ``, "")
		f(c.String(), `null`, "")
		f(c.String(), `{}`, "")
	}
	f("svc_orderbook", `[]`, "want an object")
	f("svc_orderbook", `"x"`, "want an object")
	// orderbook_ids / clob_ids.
	f("svc_orderbook", `{"orderbook_ids":[`+book+`]}`, "")
	f("svc_orderbook", `{"clob_ids":[`+book+`]}`, "")
	f("svc_orderbook", `{"orderbook_ids":[]}`, "")
	f("svc_orderbook", `{"orderbook_ids":[`+book+`],"clob_ids":[`+book+`]}`, "aliases")
	f("svc_orderbook", `{"orderbook_ids":`+book+`}`, "orderbook_ids")
	f("svc_orderbook", `{"orderbook_ids":["0x01"]}`, "orderbook_ids")
	f("svc_orderbook", `{"orderbook_ids":[`+strings.Repeat(book+",", 64)+book+`]}`, "at most 64")
	f("svc_positions", `{"account":`+a1+`,"orderbook_ids":"junk"}`, "") // ignored there
	// depth.
	f("svc_orderbook", `{"depth":20}`, "")
	f("svc_orderbook", `{"depth":"0x14"}`, "")
	f("svc_orderbook", `{"depth":0}`, "depth")
	f("svc_orderbook", `{"depth":-1}`, "depth")
	f("svc_orderbook", `{"depth":1.5}`, "depth")
	// bidder / bidders.
	f("svc_orders", `{"bidder":`+a1+`}`, "")
	f("svc_orders", `{"bidder":"0x12"}`, "bidder")
	f("svc_orders", `{"bidders":[`+a1+`]}`, "only svc_orders_v2")
	f("svc_orders_v2", `{"bidders":[`+a1+`,`+a2+`]}`, "")
	f("svc_orders_v2", `{"bidders":[`+a1+`,`+a1+`]}`, "distinct")
	f("svc_orders_v2", `{"bidders":[]}`, "bidders")
	f("svc_orders_v2", `{"bidders":`+a1+`}`, "bidders")
	f("svc_orders_v2", `{"bidder":`+a1+`,"bidders":[`+a2+`]}`, "mutually exclusive")
	many := make([]string, 65)
	for i := range many {
		many[i] = `"0x` + strings.Repeat("0", 38) + string("0123456789abcdef"[i/16]) + string("0123456789abcdef"[i%16]) + `"`
	}
	f("svc_orders_v2", `{"bidders":[`+strings.Join(many[:64], ",")+`]}`, "")
	f("svc_orders_v2", `{"bidders":[`+strings.Join(many, ",")+`]}`, "1 to 64")
	// account.
	f("svc_positions", `{"account":`+a1+`}`, "")
	f("svc_positions", `{"bidder":`+a1+`}`, "")
	f("svc_triggers", `{"bidder":`+a1+`}`, "")
	f("svc_positions", `{}`, "account: required")
	f("svc_positions", ``, "account: required")
	f("svc_triggers", `{}`, "account: required")
	f("svc_positions", `{"account":`+a1+`,"bidder":`+a2+`}`, "aliases")
	f("svc_positions", `{"account":42}`, "account")
	f("svc_withdrawals", `{"account":`+a1+`}`, "")
	f("svc_transfers", `{"account":"nope"}`, "account")
	// since / since_book.
	f("svc_orders_v2", `{"since":1700000000000000,"since_book":`+book+`}`, "")
	f("svc_orders_v2", `{"since_book":`+book+`}`, "requires since")
	f("svc_orders_v2", `{"since":1,"since_book":"0x01"}`, "since_book")
	f("svc_orderbook", `{"since":-5}`, "since")
	f("svc_orderbook", `{"since":"yesterday"}`, "since")
	f("svc_orderbook", `{"since":"0x10"}`, "")
	// logs.
	f("logs", `{"address":`+a1+`,"topics":[null,[`+book+`,`+book+`],`+book+`]}`, "")
	f("logs", `{"address":[`+a1+`,`+a2+`]}`, "")
	f("logs", `{"address":"0x1"}`, "address")
	f("logs", `{"topics":[null,null,null,null]}`, "")
	f("logs", `{"topics":[null,null,null,null,null]}`, "too many topic positions (max 4)")
	topics := strings.Repeat(book+",", 16)
	f("logs", `{"topics":[[`+topics[:len(topics)-1]+`]]}`, "")
	f("logs", `{"topics":[[`+topics+book+`]]}`, "too many topic alternatives (max 16)")
	f("logs", `{"address":[`+strings.Join(many[:64], ",")+`]}`, "")
	f("logs", `{"address":[`+strings.Join(many, ",")+`]}`, "too many addresses (max 64)")
	f("logs", `{"topics":["0x12"]}`, "topics")
	f("logs", `{"topics":{}}`, "topics")
	f("logs", `{"fromBlock":"latest","toBlock":"0x10"}`, "")
	f("logs", `{"fromBlock":"0x20","toBlock":"0x10"}`, "toBlock")
	f("logs", `{"fromBlock":"soon"}`, "fromBlock")
	f("logs", `{"minAttestations":3}`, "")
	f("logs", `{"minimum_attestations":3}`, "")
	f("logs", `{"minAttestations":-3}`, "minAttestations")
	// receipts.
	f("svc_accountReceipts", `{"address":`+a1+`,"since":5}`, "")
	f("svc_accountReceipts", `{"since":5}`, "address: required")
	f("svc_accountReceipts", ``, "address: required")
	f("svc_confirmedReceipts", `{"since":"x"}`, "since")
	// pastPerfectTime.
	f("svc_pastPerfectTime", `1700000000000000`, "")
	f("svc_pastPerfectTime", `"0x60a1b2c3d4e5f"`, "")
	f("svc_pastPerfectTime", `{"timestamp":5}`, "")
	f("svc_pastPerfectTime", ``, "microsecond timestamp")
	f("svc_pastPerfectTime", `"soon"`, "microsecond timestamp")
	f("svc_pastPerfectTime", `-1`, "microsecond timestamp")
	f("newHeads", `{"anything":1}`, "newHeads: unknown parameter")
	f("newHeads", `[1]`, "takes no parameters")
}

func TestParseSpecValues(t *testing.T) {
	v := fastjson.MustParse(`{"bidders":["0x2222222222222222222222222222222222222222","0x1111111111111111111111111111111111111111"],
		"clob_ids":["0x0000000000000000000000000000000000000000000000000000000000000002","0x0000000000000000000000000000000000000000000000000000000000000001","0x0000000000000000000000000000000000000000000000000000000000000002"],
		"since":"0x10","since_book":"0x0000000000000000000000000000000000000000000000000000000000000001"}`)
	s, err := parseSpec([]byte("svc_orders_v2"), v)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.accounts) != 2 || s.accounts[0][0] != 0x11 || len(s.books) != 2 || s.books[0][31] != 1 ||
		!s.hasSince || s.since != 16 || !s.hasSinceBook || s.sinceBook[31] != 1 {
		t.Fatalf("bad spec %+v", s)
	}
	s, err = parseSpec([]byte("logs"), fastjson.MustParse(`{"topics":[null,[]]}`))
	if err != nil || len(s.logs.topics) != 2 || len(s.logs.topics[0]) != 0 || s.logs.toBlock != 1<<64-1 {
		t.Fatalf("bad logs spec %+v %v", s.logs, err)
	}
}

// TestParamsPerChannel sends every parameter of the spec's table, and the
// live network's aliases, to every channel: each is either taken (and
// filters as parsed) or refused with -32602; none is ignored, except the
// orderbook_ids the spec says the account channels ignore.
func TestParamsPerChannel(t *testing.T) {
	book := `"0x` + strings.Repeat("01", 32) + `"`
	a1 := `"0x` + strings.Repeat("11", 20) + `"`
	a2 := `"0x` + strings.Repeat("22", 20) + `"`
	values := map[string]string{
		"orderbook_ids": `[` + book + `]`, "clob_ids": `[` + book + `]`, "bidder": a1, "account": a1,
		"bidders": `[` + a1 + `,` + a2 + `]`, "depth": `5`, "since": `1`, "since_book": book, "address": a1,
		"topics": `[null]`, "fromBlock": `"0x1"`, "toBlock": `"latest"`, "minAttestations": `1`,
		"minimum_attestations": `1`, "timestamp": `5`, "acount": a1, "orderbook_id": book, "bidderz": a1,
	}
	// required is what a channel needs besides the key under test.
	required := map[Channel]string{ChannelPositions: `"account":` + a1, ChannelTriggers: `"account":` + a1,
		ChannelAccountReceipts: `"address":` + a1}
	for c := ChannelOrderbook; c < channelEnd; c++ {
		for key, val := range values {
			want := takes(c, key)
			body := `"` + key + `":` + val
			if r, ok := required[c]; ok && key != "account" && key != "bidder" && key != "address" {
				body = r + "," + body
			}
			if key == "since_book" {
				body = `"since":1,` + body
			}
			s, err := parseSpec([]byte(c.String()), fastjson.MustParse(`{`+body+`}`))
			switch {
			case want && err != nil:
				t.Errorf("%s {%s}: refused: %s", c, body, err.Data)
			case !want && (err == nil || err.Code != -32602):
				t.Errorf("%s {%s}: accepted, want -32602", c, body)
			case want && (key == "bidder" || key == "account") && (len(s.accounts) != 1 || s.accounts[0][0] != 0x11):
				t.Errorf("%s {%s}: the account filter is %x", c, body, s.accounts)
			case want && (key == "orderbook_ids" || key == "clob_ids") && c <= ChannelMarkets && len(s.books) != 1:
				t.Errorf("%s {%s}: the book filter is %x", c, body, s.books)
			case want && (key == "orderbook_ids" || key == "clob_ids") && c > ChannelMarkets && len(s.books) != 0:
				t.Errorf("%s {%s}: orderbook_ids must be ignored, got %x", c, body, s.books)
			}
		}
	}
}

func TestParamsRefused(t *testing.T) {
	f := func(typ, params, wantData string) {
		t.Helper()
		_, err := parseSpec([]byte(typ), fastjson.MustParse(params))
		if err == nil || err.Code != -32602 || !strings.Contains(string(err.Data), wantData) {
			t.Fatalf("%s %s: got %v, want -32602 containing %q", typ, params, err, wantData)
		}
	}
	a1 := `"0x` + strings.Repeat("11", 20) + `"`
	a2 := `"0x` + strings.Repeat("22", 20) + `"`
	f("svc_orders_v2", `{"account":`+a1+`,"bidder":`+a1+`}`, "aliases")
	f("svc_orders", `{"account":`+a1+`,"bidder":`+a2+`}`, "aliases")
	f("svc_orders_v2", `{"account":`+a1+`,"bidders":[`+a2+`]}`, "mutually exclusive")
	f("svc_orders", `{"account":42}`, "bidder")
	f("svc_orders_v2", `{"account":"0x12"}`, "bidder")
	f("svc_withdrawals", `{"bidder":"nope"}`, "account")
	f("svc_transfers", `{"account":`+a1+`,"bidder":`+a1+`}`, "aliases")
	f("svc_orders", `{"depth":5}`, "depth: only svc_orderbook")
	f("svc_orderbook", `{"since_book":"0x01"}`, "since_book: only svc_orders_v2")
	f("svc_candles", `{"bidder":`+a1+`}`, "svc_candles: unknown parameter")
	f("svc_markets", `{"account":`+a1+`}`, "svc_markets: unknown parameter")
	f("logs", `{"since":1}`, "logs: unknown parameter")
	f("svc_confirmedReceipts", `{"address":`+a1+`}`, "svc_confirmedReceipts: unknown parameter")
	f("svc_pastPerfectTime", `{"timestamp":1,"since":2}`, "aliases")
	f("svc_pastPerfectTime", `{"at":1}`, "svc_pastPerfectTime: unknown parameter")
	f("svc_orders", `{"bidder":null,"Bidder":`+a1+`}`, "unknown parameter")
}

// TestParseChannelLiveNames: every svc_ channel is also known by its pod_
// name (the live network's); the channels without the prefix are not.
func TestParseChannelLiveNames(t *testing.T) {
	for c := ChannelOrderbook; c < channelEnd; c++ {
		name := c.String()
		if got := ParseChannel([]byte(name)); got != c {
			t.Fatalf("%s: %v", name, got)
		}
		live, ok := strings.CutPrefix(name, "svc_")
		if got := ParseChannel([]byte("pod_" + live)); ok && got != c || !ok && got != 0 {
			t.Fatalf("pod_%s: %v", live, got)
		}
	}
	for _, bad := range []string{"pod_", "pod_orders_v3", "svc_logs", "pod_logs", "pod_newHeads", "POD_orders", "pod_orders_v2x"} {
		if got := ParseChannel([]byte(bad)); got != 0 {
			t.Fatalf("%s parsed as %v", bad, got)
		}
	}
}
