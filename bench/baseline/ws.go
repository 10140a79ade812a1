package baseline

// The WebSocket yardstick for the node's subscriptions: eth_subscribe over
// gorilla/websocket on net/http, as a typical Go developer writes it. A
// reader per connection (the net/http handler's goroutine) answers
// eth_subscribe; a writer goroutine per connection is the only one writing
// to it; Broadcast hands the payload to every subscriber's writer, which
// builds the notification envelope with encoding/json, for itself, and
// writes it with WriteMessage. permessage-deflate is negotiated when the
// client offers it. Slow or failed subscribers are dropped: every write has
// a deadline, and a subscriber whose queue is full is closed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// WebSocket bounds.
const (
	WSWriteTimeout  = 5 * time.Second // per message written
	WSQueueMax      = 64              // messages queued per connection; a subscriber further behind is dropped
	WSMessageMax    = 64 << 10        // bytes of one incoming message
	wsHandshakeWait = 10 * time.Second
)

// WSServer serves eth_subscribe over WebSocket on a loopback port and
// broadcasts notifications to its subscribers.
type WSServer struct {
	types    []string // the subscription types accepted
	upgrader websocket.Upgrader
	srv      *http.Server
	ln       net.Listener
	done     chan struct{}
	nextID   atomic.Uint64

	mu     sync.Mutex
	conns  map[*wsConn]struct{}
	closed bool
}

// wsConn is one connection; its subscriptions are the ids in subs.
type wsConn struct {
	conn *websocket.Conn
	out  chan wsOut
	stop chan struct{} // closed once, by drop
	once sync.Once
	subs []string // under WSServer.mu
}

// wsOut is a message for the writer: raw bytes (an answer) or a
// notification of payload to subscription id.
type wsOut struct {
	raw     []byte
	id      string
	payload any
}

type wsNotification struct {
	JSONRPC string   `json:"jsonrpc"`
	Method  string   `json:"method"`
	Params  wsParams `json:"params"`
}

type wsParams struct {
	Subscription string `json:"subscription"`
	Result       any    `json:"result"`
}

// StartWS listens on addr, which must be a loopback address ("127.0.0.1:0"
// picks a port), and accepts eth_subscribe for the given types (e.g.
// "svc_orderbook"); their parameters are not interpreted.
func StartWS(addr string, types ...string) (*WSServer, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
		return nil, fmt.Errorf("baseline: the WebSocket server listens on loopback only, got %q", addr)
	}
	if len(types) == 0 {
		return nil, errors.New("baseline: no subscription type to serve")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("baseline: cannot listen on %s: %w", addr, err)
	}
	s := &WSServer{types: slices.Clone(types), ln: ln, done: make(chan struct{}), conns: map[*wsConn]struct{}{},
		upgrader: websocket.Upgrader{HandshakeTimeout: wsHandshakeWait, EnableCompression: true}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: wsHandshakeWait}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *WSServer) Addr() string { return s.ln.Addr().String() }

// Subscriptions returns the number of live subscriptions.
func (s *WSServer) Subscriptions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		n += len(c.subs)
	}
	return n
}

// Broadcast queues payload for every subscription; each connection's writer
// encodes its own envelope with encoding/json. payload must not change
// afterwards: the writers read it concurrently. It returns the number of
// subscriptions it was queued for; a connection whose queue is full is
// dropped instead.
func (s *WSServer) Broadcast(payload any) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
	subs:
		for _, id := range c.subs {
			select {
			case c.out <- wsOut{id: id, payload: payload}:
				n++
			default:
				s.dropLocked(c)
				break subs
			}
		}
	}
	return n
}

// ServeHTTP upgrades the request and reads the connection's requests until
// it fails or is closed.
func (s *WSServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered
	}
	conn.SetReadLimit(WSMessageMax)
	c := &wsConn{conn: conn, out: make(chan wsOut, WSQueueMax), stop: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	go s.write(c)
	defer s.drop(c)
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		resp := s.call(c, msg)
		if resp == nil {
			continue // queued by call
		}
		answer, err := json.Marshal(resp)
		if err != nil {
			return
		}
		select {
		case c.out <- wsOut{raw: answer}:
		case <-c.stop:
			return
		}
	}
}

// call answers one JSON-RPC request, registering a subscription for
// eth_subscribe: then it queues the answer itself, before any notification
// to it, and returns nil.
func (s *WSServer) call(c *wsConn, msg []byte) *response {
	var req request
	resp := &response{JSONRPC: "2.0", ID: json.RawMessage("null")}
	if err := json.Unmarshal(msg, &req); err != nil {
		resp.Error = errParse
		return resp
	}
	if req.ID != nil {
		resp.ID = req.ID
	}
	if req.Method != "eth_subscribe" {
		resp.Error = errMethodNotFound
		return resp
	}
	var typ string
	if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &typ) != nil || !slices.Contains(s.types, typ) {
		resp.Error = errInvalidParams
		return resp
	}
	id := "0x" + strconv.FormatUint(s.nextID.Add(1), 16)
	// Registered under the lock Broadcast holds, and the answer queued
	// under it too, so that no notification overtakes the answer.
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, live := s.conns[c]; !live {
		resp.Error = &rpcError{Code: -32000, Message: "connection closed"}
		return resp
	}
	resp.Result = id
	answer, err := json.Marshal(resp)
	if err != nil {
		resp.Result, resp.Error = nil, &rpcError{Code: -32603, Message: err.Error()}
		return resp
	}
	select {
	case c.out <- wsOut{raw: answer}:
		c.subs = append(c.subs, id)
	default:
		s.dropLocked(c)
	}
	return nil
}

// write is the connection's only writer.
func (s *WSServer) write(c *wsConn) {
	defer s.drop(c)
	for {
		var m wsOut
		select {
		case m = <-c.out:
		case <-c.stop:
			return
		}
		msg := m.raw
		if msg == nil {
			var err error
			msg, err = json.Marshal(&wsNotification{JSONRPC: "2.0", Method: "eth_subscription",
				Params: wsParams{Subscription: m.id, Result: m.payload}})
			if err != nil {
				return
			}
		}
		_ = c.conn.SetWriteDeadline(time.Now().Add(WSWriteTimeout))
		if err := c.conn.WriteMessage(websocket.TextMessage, msg); err != nil {
			return
		}
	}
}

func (s *WSServer) drop(c *wsConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(c)
}

// dropLocked closes c and forgets its subscriptions; s.mu is held.
func (s *WSServer) dropLocked(c *wsConn) {
	delete(s.conns, c)
	c.subs = nil
	c.once.Do(func() {
		close(c.stop)
		c.conn.Close()
	})
}

// Close stops listening and closes every connection.
func (s *WSServer) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		s.dropLocked(c)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}
