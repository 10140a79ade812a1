package baseline

import (
	"context"
	"encoding/hex"
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
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// BodyBytesMax bounds a request body, as any public server should.
const BodyBytesMax = 1 << 20

// Handler answers JSON-RPC over HTTP POST.
type Handler struct {
	chainID string // "0x50d"

	mu       sync.RWMutex
	balances map[[20]byte]*big.Int
}

// NewHandler serves chain id chainID and a copy of balances.
func NewHandler(chainID uint64, balances map[[20]byte]*big.Int) *Handler {
	h := &Handler{chainID: "0x" + strconv.FormatUint(chainID, 16), balances: make(map[[20]byte]*big.Int, len(balances))}
	for a, b := range balances {
		h.balances[a] = new(big.Int).Set(b)
	}
	return h
}

type request struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

var (
	errParse          = &rpcError{Code: -32700, Message: "Parse error"}
	errMethodNotFound = &rpcError{Code: -32601, Message: "Method not found"}
	errInvalidParams  = &rpcError{Code: -32602, Message: "Invalid params"}
)

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var req request
	resp := response{JSONRPC: "2.0"}
	if err := json.NewDecoder(io.LimitReader(r.Body, BodyBytesMax)).Decode(&req); err != nil {
		resp.ID = json.RawMessage("null")
		resp.Error = errParse
	} else {
		resp.ID = req.ID
		if resp.ID == nil {
			resp.ID = json.RawMessage("null")
		}
		resp.Result, resp.Error = h.call(&req)
	}
	out, err := json.Marshal(&resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func (h *Handler) call(req *request) (any, *rpcError) {
	switch req.Method {
	case "eth_chainId":
		return h.chainID, nil
	case "eth_getBalance":
		if len(req.Params) < 1 {
			return nil, errInvalidParams
		}
		var s string
		if err := json.Unmarshal(req.Params[0], &s); err != nil {
			return nil, errInvalidParams
		}
		addr, err := parseAddress(s)
		if err != nil {
			return nil, errInvalidParams
		}
		return h.balance(addr), nil
	}
	return nil, errMethodNotFound
}

func (h *Handler) balance(addr [20]byte) string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if b, ok := h.balances[addr]; ok {
		return "0x" + b.Text(16)
	}
	return "0x0"
}

func parseAddress(s string) ([20]byte, error) {
	var a [20]byte
	if len(s) != 42 || !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
		return a, errors.New("address must be 0x and 40 hex digits")
	}
	_, err := hex.Decode(a[:], []byte(s[2:]))
	return a, err
}

// Server is a Handler listening on a loopback port.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Start listens on addr ("127.0.0.1:0" picks a port) and serves h.
func Start(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("baseline: cannot listen on %s: %w", addr, err)
	}
	s := &Server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, waiting up to a few seconds for open requests.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}

// NativeBalances is the native-token part of a genesis as the baseline's
// balance map: the baseline knows no other token.
func NativeBalances(genesis []node.Alloc) map[[20]byte]*big.Int {
	m := make(map[[20]byte]*big.Int)
	for _, g := range genesis {
		if g.Token == core.NativeToken {
			m[g.Account] = g.Amount.ToBig()
		}
	}
	return m
}
