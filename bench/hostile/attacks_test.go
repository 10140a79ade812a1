package hostile

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/subs"
)

// The attackers' loopback addresses: not the good client's 127.0.0.1.
const (
	attackerIP = "127.0.0.2"
	floodIP    = "127.0.0.3"
)

// hostPort is the node's "127.0.0.1:PORT".
func (e *env) hostPort() string { return strings.TrimPrefix(e.rpcURL, "http://") }

// dialFrom opens a TCP connection to the node from the loopback address ip.
func (e *env) dialFrom(ip string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", e.hostPort())
}

// readlessBuffer is the receive buffer of a client that will not read:
// small, so that what it leaves unread piles up in the node rather than in
// the kernel's buffers on its side, but several loopback segments (MSS
// about 47 KB) large: with less, the kernel drops the node's segments and
// both sides stall in retransmission back-off, which tests TCP, not us.
const readlessBuffer = 256 << 10

// dialReadless is dialFrom for a client that will not read.
func (e *env) dialReadless(ip string) (net.Conn, error) {
	conn, err := e.dialFrom(ip)
	if err == nil {
		err = conn.(*net.TCPConn).SetReadBuffer(readlessBuffer)
	}
	return conn, err
}

// httpFrom is an HTTP client whose connections come from ip.
func (e *env) httpFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// wsFrom opens a WebSocket connection from ip with the given headers.
func (e *env) wsFrom(ip string, h http.Header) (*websocket.Conn, *http.Response, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	wd := websocket.Dialer{NetDialContext: d.DialContext, HandshakeTimeout: 5 * time.Second}
	return wd.Dial(e.wsURL, h)
}

// rpcAnswer is the part of a JSON-RPC response the attacks check.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Method string `json:"method"`
	Params *struct {
		Subscription string   `json:"subscription"`
		Error        *rpcErrT `json:"error"`
	} `json:"params"`
}

type rpcErrT struct {
	Code int `json:"code"`
}

// postExpectError posts body from the attacker's address until ctx ends
// and checks that every answer is HTTP 200 with one JSON-RPC error of
// code whose message contains want.
func (e *env) postExpectError(ctx context.Context, body []byte, code int, want string) (string, error) {
	c := e.httpFrom(attackerIP)
	defer c.CloseIdleConnections()
	sent := 0
	var took time.Duration
	for ctx.Err() == nil || sent == 0 {
		start := time.Now()
		resp, err := c.Post(e.rpcURL, "application/json", bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return "", err
		}
		took = max(took, time.Since(start))
		var a rpcAnswer
		if err := json.Unmarshal(raw, &a); err != nil || resp.StatusCode != 200 || a.Error == nil ||
			a.Error.Code != code || !strings.Contains(a.Error.Message+string(a.Error.Data), want) {
			return "", fmt.Errorf("want HTTP 200 and error %d mentioning %q, got %d %.300s", code, want, resp.StatusCode, raw)
		}
		sent++
	}
	return fmt.Sprintf("%d requests of %d KB, each answered %d in at most %.0f ms", sent, len(body)>>10, code, ms(took)), nil
}

// slowHeaders opens sc.slowConns connections that send a request head one
// field every 500 ms: each must be answered 408 once the header deadline
// passes, or refused 503 at once beyond the per-address connection limit,
// and closed.
func slowHeaders(ctx context.Context, e *env) (string, error) {
	var got408, got503, closedLate atomic.Int64
	errs := make(chan error, e.sc.slowConns)
	var wg sync.WaitGroup
	for range e.sc.slowConns {
		conn, err := e.dialFrom(attackerIP)
		if err != nil {
			return "", err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			opened := time.Now()
			status := make(chan string, 1)
			go func() {
				conn.SetReadDeadline(opened.Add(headerTimeout + 3*time.Second))
				line, _ := bufio.NewReader(conn).ReadString('\n')
				io.Copy(io.Discard, conn) // until the node closes
				status <- line
			}()
			io.WriteString(conn, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case line := <-status:
					switch {
					case strings.HasPrefix(line, "HTTP/1.1 408"):
						got408.Add(1)
					case strings.HasPrefix(line, "HTTP/1.1 503"):
						got503.Add(1)
					default:
						errs <- fmt.Errorf("a slow-header connection got %q, want 408 or 503", line)
						return
					}
					if time.Since(opened) > headerTimeout+2*time.Second {
						closedLate.Add(1)
					}
					return
				case <-tick.C:
					io.WriteString(conn, "X-Slow: 1\r\n")
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return "", err
	}
	if closedLate.Load() > 0 {
		return "", fmt.Errorf("%d slow-header connections were closed more than 2 s after the %v deadline", closedLate.Load(), headerTimeout)
	}
	return fmt.Sprintf("%d connections: %d got 408 after %v, %d got 503 (per-address limit)", e.sc.slowConns, got408.Load(), headerTimeout, got503.Load()), nil
}

// pipelineNoRead has sc.pipeConns clients pipeline eth_blockNumber
// requests as fast as the node takes them and never read: each must be
// closed by the node once its unread answers pass the outbound bound or
// the node's outbound budget.
func pipelineNoRead(ctx context.Context, e *env) (string, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}`
	req := "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	var conns []net.Conn
	for range e.sc.pipeConns {
		conn, err := e.dialReadless(attackerIP)
		if err != nil {
			closeAll(conns)
			return "", err
		}
		conns = append(conns, conn)
	}
	sentMB, err := floodUntilClosed(conns, []byte(strings.Repeat(req, 1000)), "a client that pipelined")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d clients sent %d MB of requests, all closed by the node", len(conns), sentMB), nil
}

// floodUntilClosed floods every conn with burst at once, reading nothing,
// and checks that the node closes each; it returns the MB sent in all.
// what names the client in the error.
func floodUntilClosed(conns []net.Conn, burst []byte, what string) (int64, error) {
	var sentMB atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	for _, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			sent := flood(conn, burst)
			sentMB.Add(int64(sent >> 20))
			if !closedByNode(conn) {
				errs <- fmt.Errorf("%s %d MB without reading was not closed by the node", what, sent>>20)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return sentMB.Load(), <-errs
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// flood writes burst to conn again and again until the node closes the
// connection, or for attackMax at the most, never leaving a partial copy
// behind a timed-out write (that would be a malformed stream, which the
// node rightly closes for another reason). It returns the bytes written.
func flood(conn net.Conn, burst []byte) int {
	sent, off := 0, 0
	for stop := time.Now().Add(attackMax); time.Now().Before(stop); {
		conn.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := conn.Write(burst[off:])
		sent += n
		off = (off + n) % len(burst)
		if err != nil && !isTimeout(err) {
			break // the node closed it
		}
	}
	return sent
}

// closedByNode reads what the node sent until it closes the connection,
// and reports whether it did within 5 s (EOF or a reset, not the deadline).
func closedByNode(conn net.Conn) bool {
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, conn)
	return !isTimeout(err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// everyChannel is one subscription to each channel that takes no
// mandatory parameter beyond an orderbook or an account.
func everyChannel() []string {
	book := hexutil.Encode(node.DevMarkets()[0].ID[:])
	acct := common.Address(node.DevAddress(0)).Hex()
	return []string{
		`["newHeads"]`, `["logs",{}]`, `["svc_pastPerfectTime",{"timestamp":0}]`,
		`["svc_orderbook",{"orderbook_ids":["` + book + `"]}]`, `["svc_orders",{"orderbook_ids":["` + book + `"]}]`,
		`["svc_orders_v2",{"orderbook_ids":["` + book + `"]}]`, `["svc_candles",{"orderbook_ids":["` + book + `"]}]`,
		`["svc_markets",{}]`, `["svc_positions",{"account":"` + acct + `"}]`, `["svc_triggers",{"account":"` + acct + `"}]`,
		`["svc_withdrawals",{}]`, `["svc_transfers",{}]`, `["svc_accountReceipts",{"address":"` + acct + `"}]`,
		`["svc_confirmedReceipts",{}]`,
	}
}

// wsReadless opens sc.wsReadless WebSocket connections that subscribe to
// every channel, then keep sending requests and never read again: each
// must be closed by the node once its unread messages pass the outbound
// bound. The flood goes on the raw connection, as masked frames written
// whole, since a WebSocket library's connection is unusable after a write
// times out.
//
// The request is a read whose answer (~3 KB) is far larger than itself, so
// that the node reaches its bound after a few thousand answers whatever its
// speed. With a small answer (eth_getBalance) a node slowed by -race and a
// busy machine read requests no faster than 20 floods sent them, and one
// connection's answers still fitted in the socket buffers when the flood
// gave up after attackMax: the test measured the node's CPU, not its bound.
func wsReadless(ctx context.Context, e *env) (string, error) {
	req := `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["` + common.Address(node.DevAddress(0)).Hex() + `","latest"]}`
	channels := everyChannel()
	subscribed := 0
	var conns []net.Conn
	for range e.sc.wsReadless {
		c, _, err := e.wsFrom(attackerIP, nil)
		if err != nil {
			closeAll(conns)
			return "", err
		}
		conns = append(conns, c.UnderlyingConn())
		for i, p := range channels {
			msg := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"eth_subscribe","params":` + p + `}`
			if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
				closeAll(conns)
				return "", err
			}
		}
		// The answers to the subscribes, before anything is left unread.
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for answered := 0; answered < len(channels); {
			_, msg, err := c.ReadMessage()
			if err != nil {
				closeAll(conns)
				return "", fmt.Errorf("reading the subscribe answers: %w", err)
			}
			var a rpcAnswer
			if err := json.Unmarshal(msg, &a); err != nil {
				closeAll(conns)
				return "", err
			}
			if a.Method != "" {
				continue // a first notification
			}
			if a.Error == nil {
				subscribed++
			}
			answered++
		}
		c.UnderlyingConn().(*net.TCPConn).SetReadBuffer(readlessBuffer)
	}
	sentMB, err := floodUntilClosed(conns, bytes.Repeat(maskedText(req), 1000), "a WebSocket client that sent")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d connections with %d subscriptions sent %d MB of requests without reading: all closed by the node", len(conns), subscribed, sentMB), nil
}

// maskedText frames msg as one client text frame, masked with the zero key
// (RFC 6455 requires a mask from clients; any key, zero included, is valid).
func maskedText(msg string) []byte {
	f := []byte{0x81}
	switch n := len(msg); {
	case n < 126:
		f = append(f, 0x80|byte(n))
	default:
		f = append(f, 0x80|126, byte(n>>8), byte(n))
	}
	f = append(f, 0, 0, 0, 0)
	return append(f, msg...)
}

func feeHistoryPercentiles(ctx context.Context, e *env) (string, error) {
	p := strings.Repeat("50,", e.sc.percentiles-1) + "50"
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_feeHistory","params":["0x400","latest",[` + p + `]]}`)
	return e.postExpectError(ctx, body, -32600, "too many values (max 131072)")
}

func getLogsAddresses(ctx context.Context, e *env) (string, error) {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"earliest","toBlock":"latest","address":[`)
	for i := range e.sc.logAddrs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"0x%040x"`, i+1)
	}
	b.WriteString(`]}]}`)
	return e.postExpectError(ctx, []byte(b.String()), -32602, "too many addresses (max 64)")
}

func hugeBatch(ctx context.Context, e *env) (string, error) {
	call := `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`
	body := []byte("[" + strings.Repeat(call+",", e.sc.batchCalls-1) + call + "]")
	return e.postExpectError(ctx, body, -32600, "batch too large (max 1000")
}

func deepJSON(ctx context.Context, e *env) (string, error) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":` +
		strings.Repeat("[", e.sc.depth) + strings.Repeat("]", e.sc.depth) + `}`)
	return e.postExpectError(ctx, body, -32600, "nested too deep (max 300")
}

// wsWritesNoRead sends sc.wsWrites signed transfers, each from a fresh
// funded account so that each really waits for durability, on one
// WebSocket connection without reading, then reads the answers: the node
// must have refused those beyond its in-flight bound at once (-32005),
// never queued them on goroutines of their own.
func wsWritesNoRead(ctx context.Context, e *env) (string, error) {
	keys, err := e.fundedKeys(e.sc.wsWrites)
	if err != nil {
		return "", err
	}
	c, _, err := e.wsFrom(attackerIP, nil)
	if err != nil {
		return "", err
	}
	defer c.Close()
	signer := types.LatestSignerForChainID(big.NewInt(chainID))
	to := common.Address{0xee}
	for i, key := range keys {
		tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{ChainID: big.NewInt(chainID),
			GasTipCap: new(big.Int), GasFeeCap: e.good.fee, Gas: 21_000, To: &to, Value: big.NewInt(1)})
		if err != nil {
			return "", err
		}
		raw, _ := tx.MarshalBinary()
		msg := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"eth_sendRawTransaction","params":["` + hexutil.Encode(raw) + `"]}`
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			return "", fmt.Errorf("write %d: %w", i, err)
		}
	}
	var limited, accepted, other int
	c.SetReadDeadline(time.Now().Add(e.sc.phase + 10*time.Second))
	for limited+accepted+other < len(keys) {
		_, msg, err := c.ReadMessage()
		if err != nil {
			return "", fmt.Errorf("after %d answers of %d: %w", limited+accepted+other, len(keys), err)
		}
		var a rpcAnswer
		if err := json.Unmarshal(msg, &a); err != nil {
			return "", err
		}
		switch {
		case a.Error == nil:
			accepted++
		case a.Error.Code == -32005:
			limited++
		default:
			other++
		}
	}
	if limited == 0 || other > 0 {
		return "", fmt.Errorf("%d write calls sent without reading: %d refused by the in-flight bound, %d other errors, want some of the first and none of the second", len(keys), limited, other)
	}
	return fmt.Sprintf("%d write calls: %d accepted, %d refused at once (-32005)", len(keys), accepted, limited), nil
}

// fundedKeys makes n fresh keys and credits each with native tokens
// through admin_deposit, a thousand to a batch.
func (e *env) fundedKeys(n int) ([]*ecdsa.PrivateKey, error) {
	admin, err := rpc.DialOptions(context.Background(), e.rpcURL, rpc.WithHeader("Authorization", "Bearer test"))
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	keys := make([]*ecdsa.PrivateKey, n)
	var batch []rpc.BatchElem
	for i := range keys {
		if keys[i], err = crypto.GenerateKey(); err != nil {
			return nil, err
		}
		batch = append(batch, rpc.BatchElem{Method: "admin_deposit", Result: new(json.RawMessage), Args: []any{map[string]any{
			"token": "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE", "to": crypto.PubkeyToAddress(keys[i].PublicKey), "amount": "0xde0b6b3a7640000"}}})
		if len(batch) == 1000 || i == n-1 {
			if err := admin.BatchCall(batch); err != nil {
				return nil, err
			}
			for _, el := range batch {
				if el.Error != nil {
					return nil, fmt.Errorf("admin_deposit: %w", el.Error)
				}
			}
			batch = batch[:0]
		}
	}
	return keys, nil
}

// subscriptionFlood opens connections from one address, 128 subscriptions
// each, past the per-address bound: the subscriptions beyond it get -32005.
func subscriptionFlood(ctx context.Context, e *env) (string, error) {
	const perConn = 128
	conns := subsPerAddrMax/perConn + 2
	var ok, refused int
	var open []*websocket.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for range conns {
		c, _, err := e.wsFrom(floodIP, nil)
		if err != nil {
			return "", err
		}
		open = append(open, c)
		for i := range perConn {
			msg := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"eth_subscribe","params":["newHeads"]}`
			if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
				return "", err
			}
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for answered := 0; answered < perConn; {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return "", err
			}
			var a rpcAnswer
			if err := json.Unmarshal(msg, &a); err != nil {
				return "", err
			}
			switch {
			case a.Method != "": // a notification of an earlier subscription
				continue
			case a.Error == nil:
				ok++
			case a.Error.Code == -32005 && strings.Contains(a.Error.Message, strconv.Itoa(subsPerAddrMax)):
				refused++
			default:
				return "", fmt.Errorf("subscribe: %d %s", a.Error.Code, a.Error.Message)
			}
			answered++
		}
	}
	if ok != subsPerAddrMax {
		return "", fmt.Errorf("%d subscriptions accepted from one address, want exactly %d", ok, subsPerAddrMax)
	}
	<-ctx.Done()
	return fmt.Sprintf("%d subscriptions asked from one address: %d accepted, %d refused (-32005)", conns*perConn, ok, refused), nil
}

// foreignOrigin plays a web page on another site and a DNS-rebinding host
// name: every request, preflight and upgrade is refused 403; a localhost
// page is served with its origin echoed.
func foreignOrigin(ctx context.Context, e *env) (string, error) {
	c := e.httpFrom(attackerIP)
	defer c.CloseIdleConnections()
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`
	try := func(method, origin, host string, want int) error {
		req, err := http.NewRequestWithContext(context.Background(), method, e.rpcURL, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if method == "OPTIONS" {
			req.Header.Set("Access-Control-Request-Method", "POST")
		}
		if host != "" {
			req.Host = host
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			return fmt.Errorf("%s with Origin %q Host %q: status %d, want %d", method, origin, host, resp.StatusCode, want)
		}
		if acao := resp.Header.Get("Access-Control-Allow-Origin"); want == 200 && origin != "" && acao != origin {
			return fmt.Errorf("%s from %q: Access-Control-Allow-Origin %q, want the origin echoed", method, origin, acao)
		}
		return nil
	}
	rounds := 0
	for ctx.Err() == nil || rounds == 0 {
		for _, err := range []error{
			try("POST", "http://evil.example", "", 403),
			try("OPTIONS", "http://evil.example", "", 403),
			try("POST", "", "evil.example", 403),
			try("POST", "", "localhost.evil.example:8545", 403),
			try("POST", "http://localhost:5173", "", 200),
			try("POST", "", "localhost:8545", 200),
		} {
			if err != nil {
				return "", err
			}
		}
		_, resp, err := e.wsFrom(attackerIP, http.Header{"Origin": {"http://evil.example"}})
		if err == nil || resp == nil || resp.StatusCode != 403 {
			return "", fmt.Errorf("WebSocket upgrade from http://evil.example: %v, want 403", err)
		}
		rounds++
	}
	return fmt.Sprintf("%d rounds of 7: foreign Origin and Host refused 403, localhost served", rounds), nil
}

// subsPerAddrMax is the node's subscriptions-per-address bound (ledgerd
// keeps the hub's default).
const subsPerAddrMax = subs.SubsPerAddrMaxDefault
