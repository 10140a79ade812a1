package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"

	"github.com/ledgervenue/node/bench/load"
)

// waitUpPoll is how often --wait-up asks a node that is not up yet.
const waitUpPoll = 100 * time.Millisecond

// target is one node under test.
type target struct {
	name        string // A, B
	url         string
	scheme      string // http, https, ws or wss
	addr        string // host:port
	path        string
	allowRemote bool
	scen        scenario
	metrics     *metricsSource    // --metrics; nil: none
	eth         *ethclient.Client // for setting up (funding, nonces); opened on first use
}

// parseTarget checks a node URL: a known scheme, and a loopback host unless
// allowRemote (no name is resolved to decide).
func parseTarget(raw string, allowRemote bool) (*target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %w", raw, err)
	}
	t := &target{url: raw, scheme: u.Scheme, addr: u.Host, path: u.RequestURI(), allowRemote: allowRemote}
	if u.Port() == "" {
		port := map[string]string{"http": "80", "ws": "80", "https": "443", "wss": "443"}[u.Scheme]
		t.addr = net.JoinHostPort(u.Hostname(), port)
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return nil, fmt.Errorf("URL %q: the scheme must be http, https, ws or wss", raw)
	}
	if !allowRemote {
		if err := load.CheckLoopback(t.addr); err != nil {
			return nil, fmt.Errorf("%w (pass --allow-remote to drive it)", err)
		}
	}
	return t, nil
}

func (t *target) tls() bool { return t.scheme == "https" || t.scheme == "wss" }

// wsURL is the node's WebSocket endpoint: the URL itself, or the same host
// and path over ws(s):// (ledgerd and anvil serve both on one port).
func (t *target) wsURL() string {
	if t.tls() {
		return "wss://" + t.addr + t.path
	}
	return "ws://" + t.addr + t.path
}

// dialTCP opens a connection to the node, TLS for https and wss.
func (t *target) dialTCP(ctx context.Context) (net.Conn, error) {
	nc, err := load.Dialer(t.allowRemote).DialContext(ctx, "tcp", t.addr)
	if err != nil || !t.tls() {
		return nc, err
	}
	host, _, _ := net.SplitHostPort(t.addr)
	tc := tls.Client(nc, &tls.Config{ServerName: host})
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

// dial opens one load connection: HTTP/1.1 keep-alive or WebSocket.
func (t *target) dial(ctx context.Context, _ int) (load.RoundTripper, error) {
	if t.scheme == "ws" || t.scheme == "wss" {
		return dialWS(ctx, t)
	}
	nc, err := t.dialTCP(ctx)
	if err != nil {
		return nil, err
	}
	return load.NewHTTPConn(nc, t.addr, t.path, ""), nil
}

// wsDialer dials WebSockets through the loopback-checking dialer.
func (t *target) wsDialer() *websocket.Dialer {
	return &websocket.Dialer{NetDialContext: load.Dialer(t.allowRemote).DialContext, HandshakeTimeout: setupTimeout,
		ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
}

// client returns a go-ethereum client of the node for setting up.
func (t *target) client(ctx context.Context) (*ethclient.Client, error) {
	if t.eth != nil {
		return t.eth, nil
	}
	d := load.Dialer(t.allowRemote)
	c, err := gethrpc.DialOptions(ctx, t.url,
		gethrpc.WithHTTPClient(&http.Client{Timeout: setupTimeout, Transport: &http.Transport{DialContext: d.DialContext}}),
		gethrpc.WithWebsocketDialer(*t.wsDialer()))
	if err != nil {
		return nil, err
	}
	t.eth = ethclient.NewClient(c)
	return t.eth, nil
}

// wsConn is a WebSocket load connection with one request in flight.
type wsConn struct {
	ws  *websocket.Conn
	buf []byte
}

func dialWS(ctx context.Context, t *target) (*wsConn, error) {
	ws, _, err := t.wsDialer().DialContext(ctx, t.wsURL(), nil)
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(load.BodyBytesMax)
	return &wsConn{ws: ws}, nil
}

func (c *wsConn) RoundTrip(body []byte) (int, []byte, error) {
	if err := c.ws.WriteMessage(websocket.TextMessage, body); err != nil {
		return 0, nil, err
	}
	_, r, err := c.ws.NextReader()
	if err != nil {
		return 0, nil, err
	}
	c.buf = c.buf[:0]
	for {
		if len(c.buf) == cap(c.buf) {
			c.buf = append(c.buf, 0)[:len(c.buf)]
		}
		n, err := r.Read(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+n]
		if err == io.EOF {
			return 200, c.buf, nil
		}
		if err != nil {
			return 0, nil, err
		}
	}
}

func (c *wsConn) SetDeadline(t time.Time) error {
	return errors.Join(c.ws.SetReadDeadline(t), c.ws.SetWriteDeadline(t))
}

func (c *wsConn) Close() error { return c.ws.Close() }

// waitUp waits up to d for the node to answer eth_chainId.
func (t *target) waitUp(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := t.client(cctx)
		if err == nil {
			_, err = c.ChainID(cctx)
		}
		cancel()
		switch {
		case err == nil:
			return nil
		case time.Now().After(deadline) || ctx.Err() != nil:
			return fmt.Errorf("%s did not answer within %v: %w", t.url, d, err)
		}
		time.Sleep(waitUpPoll)
	}
}
