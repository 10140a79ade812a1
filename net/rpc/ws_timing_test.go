package rpc_test

import (
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ledgervenue/node/net/node"
)

// BenchmarkWSSendTransfers measures transfers/s over WebSocket: 8
// connections, each sending one dev account's pre-signed transfers one
// after another as the node answers (durable). A lone
// eth_sendRawTransaction takes the deferred path, as over HTTP.
func BenchmarkWSSendTransfers(b *testing.B) {
	const conns = 8
	tn := startNodeTB(b)
	perConn := max(1, b.N/conns)
	bodies := make([][][]byte, conns)
	for c := range conns {
		key := node.DevKey(c)
		for nonce := range perConn {
			tx := hexBytes(b, dynTx(b, key, chainID, uint64(nonce), devAddr(9), big.NewInt(1), gwei, new(big.Int).Mul(gwei, big.NewInt(2))))
			bodies[c] = append(bodies[c], []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_sendRawTransaction","params":[%q]}`, nonce, tx)))
		}
	}
	ws := make([]*websocket.Conn, conns)
	for c := range ws {
		conn, _, err := websocket.DefaultDialer.Dial(tn.ws, http.Header{})
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		ws[c] = conn
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, body := range bodies[c] {
				if err := ws[c].WriteMessage(websocket.TextMessage, body); err != nil {
					b.Error(err)
					return
				}
				_, msg, err := ws[c].ReadMessage()
				if err != nil || !strings.Contains(string(msg), `"result":"0x`) {
					b.Errorf("answer %s %v", msg, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(conns*perConn)/time.Since(start).Seconds(), "tx/s")
}
