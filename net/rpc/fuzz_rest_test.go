package rpc_test

import (
	"encoding/json"
	"testing"

	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
)

// FuzzRESTPath hands the Service's Serve GET and HEAD requests for fuzzed
// paths and query strings, built in the test and parsed by the server's own
// HTTP parser (a target it refuses never reaches Serve), against an
// in-process node: Serve must never panic, and must answer a status and a
// JSON body. Seeds: the REST endpoints (the bridge's and the market
// data's, docs/rest.md) with their queries.
func FuzzRESTPath(f *testing.F) {
	const account, txHash = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
		"0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b"
	book := wethBook.Hex()
	for _, s := range [][2]string{
		{"/v1/bridge/config", ""},
		{"/v1/bridge/withdrawals", "since=1767225600000000&since_id=" + txHash + "&limit=100"},
		{"/v1/bridge/withdrawals/" + account, "since=0&limit=1"},
		{"/v1/bridge/withdrawals/by-id/" + txHash, ""},
		{"/v1/bridge/withdrawals", "since=-1&limit=99999999999999999999999&limit=0"},
		{"/v1/bridge/%2e%2e/withdrawals/%zz", "since=%00&=&&a=b=c"},
		{"/", ""},
		{"http://127.0.0.1:8545/v1/bridge/config", "x"},
		{"/v1/clob/status", ""},
		{"/v1/clob/markets/stats", "to=1767225600"},
		{"/v1/clob/candles/" + book, "resolution=1m&from=1767225600&to=1767229200&limit=500"},
		{"/v1/clob/orderbook/" + book, ""},
		{"/v1/clob/orders/" + account, "until=1767225600&limit=50&cursor=1767225600000000%3A3%3A" + txHash[2:]},
		{"/v1/clob/positions/" + account, ""},
		{"/v1/clob/balances/" + account, ""},
		{"/v1/clob/triggers/" + account, "orderbook=" + book + "&limit=2&cursor=" + book + ":" + txHash},
		{"/v1/clob/backstop-transfers/" + account, ""},
		{"/v1/clob/leaderboard", "limit=10&offset=99999999999999999999&address=" + account},
		{"/v1/tx/" + txHash, ""},
		{"/v1/clob/candles/" + book, "resolution=%zz&from=-1&to=9223372036855&limit=0"},
	} {
		f.Add(false, s[0], s[1])
		f.Add(true, s[0], s[1])
	}
	tn := startNodeTB(f)
	svc := rpc.New(rpc.Config{Node: tn.node, AdminToken: testAdminToken, Manual: tn.clock, Hub: tn.hub})
	f.Fuzz(func(t *testing.T, head bool, path, query string) {
		method := "GET"
		if head {
			method = "HEAD"
		}
		target := path
		if query != "" {
			target += "?" + query
		}
		raw := []byte(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:8545\r\n\r\n")
		var p http1.Parser
		var req http1.Request
		if n, err := p.Parse(raw, &req); n == 0 || err != nil {
			return // the server answers these itself (http1's own fuzz target)
		}
		var w server.Response
		svc.Serve(&req, &w)
		if w.Status != 0 && (w.Status < 200 || w.Status > 599) {
			t.Fatalf("%s %q: status %d", method, target, w.Status)
		}
		if !json.Valid(w.Body) {
			t.Fatalf("%s %q: body is not JSON: %q", method, target, w.Body)
		}
	})
}
