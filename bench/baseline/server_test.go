package baseline

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
)

const chainID = 0x50d

// devBalances is the dev genesis as the baseline's balance map.
func devBalances() map[[20]byte]*big.Int { return NativeBalances(node.DevGenesis()) }

// startNode runs the whole node (pipeline, dispatcher, gnet server) on a
// loopback port and returns its URL.
func startNode(t *testing.T) string {
	t.Helper()
	n, err := node.Open(node.Config{DataDir: t.TempDir(), ChainID: chainID, BaseFee: *uint256.NewInt(1e9),
		Validators: 4, CommitteeSeed: []byte("baseline"), Clock: node.NewManualClock(1_767_225_600_000_000),
		Genesis: node.DevGenesis()})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(rpc.New(rpc.Config{Node: n}), server.Config{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		n.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(ctx)
		n.Close()
	})
	return "http://" + srv.Addr()
}

func startBaseline(t *testing.T) string {
	t.Helper()
	s, err := Start("127.0.0.1:0", NewHandler(chainID, devBalances()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return "http://" + s.Addr()
}

func post(t *testing.T, url, body string) (contentType string, answer []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST %s: status %d, %v", body, resp.StatusCode, err)
	}
	return resp.Header.Get("Content-Type"), answer
}

func TestAnswersEqualTheNode(t *testing.T) {
	ours, base := startNode(t), startBaseline(t)
	f := func(body, want string) {
		t.Helper()
		oursType, oursAnswer := post(t, ours, body)
		baseType, baseAnswer := post(t, base, body)
		if !bytes.Equal(oursAnswer, baseAnswer) || oursType != baseType {
			t.Fatalf("request %s:\n ours     %s %s\n baseline %s %s", body, oursType, oursAnswer, baseType, baseAnswer)
		}
		if want != "" && string(oursAnswer) != want {
			t.Fatalf("request %s: answer %s, want %s", body, oursAnswer, want)
		}
	}
	f(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`, `{"jsonrpc":"2.0","id":1,"result":"0x50d"}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`, "")
	f(` {"method":"eth_chainId", "id" : "abc" ,"jsonrpc":"2.0"} `, `{"jsonrpc":"2.0","id":"abc","result":"0x50d"}`)
	f(`{"jsonrpc":"2.0","id":null,"method":"eth_chainId"}`, `{"jsonrpc":"2.0","id":null,"result":"0x50d"}`)
	f(`{"jsonrpc":"2.0","id":0,"method":"eth_chainId"}`, "")
	f(`{"jsonrpc":"2.0","id":18446744073709551617,"method":"eth_chainId"}`, "")
	f(`{"jsonrpc":"2.0","id":-7,"method":"eth_chainId"}`, "")
	for i := range node.DevKeys {
		a := node.DevAddress(i)
		lower := "0x" + hex.EncodeToString(a[:])
		f(`{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["`+lower+`","latest"]}`,
			`{"jsonrpc":"2.0","id":2,"result":"0x21e19e0c9bab2400000"}`)
	}
	f(`{"jsonrpc":"2.0","id":3,"method":"eth_getBalance","params":["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"]}`,
		`{"jsonrpc":"2.0","id":3,"result":"0x21e19e0c9bab2400000"}`)
	f(`{"jsonrpc":"2.0","id":4,"method":"eth_getBalance","params":["0x000000000000000000000000000000000000dEaD","pending"]}`,
		`{"jsonrpc":"2.0","id":4,"result":"0x0"}`)
}

func TestErrors(t *testing.T) {
	base := startBaseline(t)
	f := func(body, want string) {
		t.Helper()
		if _, got := post(t, base, body); string(got) != want {
			t.Fatalf("request %s: answer %s, want %s", body, got, want)
		}
	}
	f(`{"jsonrpc":"2.0","id":1,"method":"eth_foo"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":[]}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x12"]}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":[7]}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}`)
	f(`{"jsonrpc":`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	f(strings.Repeat(" ", BodyBytesMax)+`{}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)

	resp, err := http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: status %d", resp.StatusCode)
	}
}
