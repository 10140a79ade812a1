package baseline

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func dialWS(t *testing.T, addr string, deflate bool) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second, EnableCompression: deflate}
	conn, resp, err := d.Dial("ws://"+addr+"/", http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if got := strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate"); got != deflate {
		t.Fatalf("permessage-deflate offered %v, negotiated %v", deflate, got)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	return conn
}

func readJSON(t *testing.T, conn *websocket.Conn, v any) {
	t.Helper()
	_, msg, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(msg, v); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
}

// TestWSBroadcast: two subscribers, each with and without permessage-deflate,
// get their subscribe answer and then every broadcast in order under their
// own subscription id; an unknown type or method gets an error.
func TestWSBroadcast(t *testing.T) {
	for _, deflate := range []bool{false, true} {
		s, err := StartWS("127.0.0.1:0", "svc_orderbook")
		if err != nil {
			t.Fatal(err)
		}
		var conns [2]*websocket.Conn
		ids := map[string]bool{}
		for i := range conns {
			conns[i] = dialWS(t, s.Addr(), deflate)
			req := `{"jsonrpc":"2.0","id":7,"method":"eth_subscribe","params":["svc_orderbook",{"depth":20}]}`
			if err := conns[i].WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
				t.Fatal(err)
			}
			var answer struct {
				ID     int    `json:"id"`
				Result string `json:"result"`
			}
			readJSON(t, conns[i], &answer)
			if answer.ID != 7 || !strings.HasPrefix(answer.Result, "0x") || ids[answer.Result] {
				t.Fatalf("deflate %v: answer %+v", deflate, answer)
			}
			ids[answer.Result] = true
		}
		if n := s.Subscriptions(); n != 2 {
			t.Fatalf("deflate %v: %d subscriptions", deflate, n)
		}
		big := strings.Repeat("level ", 200) // compressible
		for tick := int64(1); tick <= 3; tick++ {
			if n := s.Broadcast(map[string]any{"timestamp": tick, "bids": big}); n != 2 {
				t.Fatalf("deflate %v: broadcast to %d", deflate, n)
			}
		}
		for i, conn := range conns {
			for tick := int64(1); tick <= 3; tick++ {
				var n struct {
					JSONRPC, Method string
					Params          struct {
						Subscription string
						Result       struct {
							Timestamp int64
							Bids      string
						}
					}
				}
				readJSON(t, conn, &n)
				if n.JSONRPC != "2.0" || n.Method != "eth_subscription" || !ids[n.Params.Subscription] ||
					n.Params.Result.Timestamp != tick || n.Params.Result.Bids != big {
					t.Fatalf("deflate %v: subscriber %d, tick %d: %+v", deflate, i, tick, n)
				}
			}
		}
		for _, req := range []string{`{"jsonrpc":"2.0","id":8,"method":"eth_subscribe","params":["svc_candles"]}`,
			`{"jsonrpc":"2.0","id":8,"method":"eth_chainId"}`} {
			if err := conns[0].WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
				t.Fatal(err)
			}
			var answer struct {
				ID    int `json:"id"`
				Error struct{ Code int }
			}
			readJSON(t, conns[0], &answer)
			if answer.ID != 8 || answer.Error.Code == 0 {
				t.Fatalf("%s answered %+v", req, answer)
			}
		}
		// A closed subscriber is dropped; the other still gets broadcasts.
		conns[1].Close()
		deadline := time.Now().Add(5 * time.Second)
		for s.Subscriptions() != 1 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := s.Broadcast(map[string]any{"timestamp": 4}); n != 1 {
			t.Fatalf("deflate %v: broadcast to %d after a close", deflate, n)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := conns[0].ReadMessage(); err == nil {
			// the tick-4 notification may arrive before the close
			if _, _, err := conns[0].ReadMessage(); err == nil {
				t.Fatalf("deflate %v: connection open after Close", deflate)
			}
		}
	}
	if _, err := StartWS("0.0.0.0:0", "svc_orderbook"); err == nil {
		t.Fatal("listening beyond loopback")
	}
}
