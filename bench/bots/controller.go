package bots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Config configures a Controller.
type Config struct {
	// AdminToken is the node's admin token: the bots fund their accounts
	// with admin_deposit.
	AdminToken string
	// Logf reports a session's start, failure and end (nil: silent).
	Logf func(format string, args ...any)
	// NowMicros is the node's time in Unix µs, which deadlines and quote
	// times follow (nil: the wall clock). ledgerd passes its node's clock,
	// which evm_increaseTime moves ahead of the wall clock (docs/anvil.md).
	NowMicros func() int64
}

// Controller runs at most one bot session against a node's listen address.
// Its methods are safe for concurrent use and never wait for the network
// (the admin methods call them on the node's event loops); Close waits.
type Controller struct {
	cfg  Config
	mu   sync.Mutex
	addr string   // host:port the bots dial; "" until SetAddr
	cur  *session // the latest session, nil before the first
}

// New returns a Controller with no session.
func New(cfg Config) *Controller {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.NowMicros == nil {
		cfg.NowMicros = func() int64 { return time.Now().UnixMicro() }
	}
	return &Controller{cfg: cfg}
}

// SetAddr names the node's listen address (host:port, as the server
// reports it), dialled as LoopbackAddr says.
func (c *Controller) SetAddr(addr string) {
	addr = LoopbackAddr(addr)
	c.mu.Lock()
	c.addr = addr
	c.mu.Unlock()
}

// LoopbackAddr is the address a client in the node's own process dials for
// the listen address addr: an unspecified host (0.0.0.0, ::) becomes
// loopback, any other address stays.
func LoopbackAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err == nil && (host == "" || ip != nil && ip.IsUnspecified()) {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// Session states, as Status reports them.
const (
	stateStarting = "starting" // resolving markets, funding accounts
	stateRunning  = "running"
	stateStopping = "stopping"
	stateStopped  = "stopped"
	stateFailed   = "failed" // the session could not start; see error
)

// session is one run of a spec.
type session struct {
	spec   Spec
	cancel context.CancelFunc
	done   chan struct{} // closed when every goroutine of the session ended
	mu     sync.Mutex
	state  string
	err    string
	bots   []*bot
}

func (s *session) set(state string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateStopping && state == stateRunning {
		return
	}
	s.state = state
	if err != nil {
		s.err = err.Error()
	}
}

// Start parses spec and starts a session in the background: it resolves
// the markets, funds each bot and runs them; Status shows how far it got.
// It refuses a bad spec, and a second session while one runs or stops.
func (c *Controller) Start(spec string) error {
	sp, err := ParseSpec(spec)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.addr == "" {
		return errors.New("bots: the node is not listening yet")
	}
	if c.cur != nil {
		select {
		case <-c.cur.done:
		default:
			c.cur.mu.Lock()
			stopping := c.cur.state == stateStopping
			c.cur.mu.Unlock()
			if stopping {
				return errors.New("bots are still stopping (their calls in flight end within seconds): try again")
			}
			return errors.New("bots are already running (admin_stopBots first)")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{spec: sp, cancel: cancel, done: make(chan struct{}), state: stateStarting}
	c.cur = s
	go c.run(ctx, s, c.addr)
	return nil
}

// Stop asks the running session to stop and returns at once: each bot
// ends after its action in flight. It reports whether one was running.
func (c *Controller) Stop() bool {
	c.mu.Lock()
	s := c.cur
	c.mu.Unlock()
	if s == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
	}
	s.set(stateStopping, nil)
	s.cancel()
	return true
}

// Close stops the session and waits until its bots ended (bounded by
// RequestTimeout per call in flight). REQUIRES: not on an event loop.
func (c *Controller) Close() {
	c.Stop()
	c.mu.Lock()
	s := c.cur
	c.mu.Unlock()
	if s != nil {
		<-s.done
	}
}

// run is a session's supervisor goroutine.
func (c *Controller) run(ctx context.Context, s *session, addr string) {
	defer close(s.done)
	defer s.cancel()
	bots, err := c.setup(ctx, &s.spec, addr)
	if err != nil {
		for _, b := range bots {
			b.c.close()
		}
		if ctx.Err() != nil { // stopped while starting
			s.set(stateStopped, nil)
			return
		}
		s.set(stateFailed, err)
		c.cfg.Logf("bots: %v", err)
		return
	}
	s.mu.Lock()
	s.bots = bots
	s.mu.Unlock()
	s.set(stateRunning, nil)
	c.cfg.Logf("bots: %d running on %s (%s)", len(bots), addr, s.spec.String())
	var wg sync.WaitGroup
	for _, b := range bots {
		wg.Go(func() { b.run(ctx) })
	}
	wg.Wait()
	for _, b := range bots {
		b.c.close()
	}
	s.set(stateStopped, nil)
	c.cfg.Logf("bots: stopped")
}

// setup resolves the spec's markets and builds its bots, each with its own
// connection: for each market in order its makers, then its takers.
func (c *Controller) setup(ctx context.Context, spec *Spec, addr string) ([]*bot, error) {
	admin, err := dial(ctx, addr, spec.Transport, c.cfg.AdminToken)
	if err != nil {
		return nil, err
	}
	defer admin.close()
	all, err := admin.markets(ctx)
	if err != nil {
		return nil, fmt.Errorf("ob_getMarkets: %w", err)
	}
	markets, err := pick(all, spec.Markets)
	if err != nil {
		return nil, err
	}
	if n := spec.Bots(len(markets)); n > BotsMax {
		return nil, fmt.Errorf("%d bots, more than %d ((makers + takers) × markets)", n, BotsMax)
	}
	chainID, err := admin.quantity(ctx, "eth_chainId")
	if err != nil {
		return nil, fmt.Errorf("eth_chainId: %w", err)
	}
	gasPrice, err := admin.quantity(ctx, "eth_gasPrice")
	if err != nil {
		return nil, fmt.Errorf("eth_gasPrice: %w", err)
	}
	// Twice the base fee: room for it to rise; the node charges the base fee.
	feeCap := new(big.Int).Lsh(gasPrice, 1)
	var bots []*bot
	for _, m := range markets {
		for r, count := range [...]int{maker: spec.Makers, taker: spec.Takers} {
			for j := range count {
				b, err := c.newBot(ctx, spec, addr, m, role(r), j, len(bots), types.LatestSignerForChainID(chainID), feeCap)
				if err != nil {
					return bots, err
				}
				bots = append(bots, b)
			}
		}
	}
	return bots, nil
}

func (c *Controller) newBot(ctx context.Context, spec *Spec, addr string, m market, r role, j, index int,
	signer types.Signer, feeCap *big.Int) (*bot, error) {
	key, err := botKey(spec.Seed, index)
	if err != nil {
		return nil, err
	}
	cl, err := dial(ctx, addr, spec.Transport, c.cfg.AdminToken)
	if err != nil {
		return nil, err
	}
	return &bot{name: fmt.Sprintf("%s-%d %s", r, j, m.Name), role: r, market: m, spec: spec, key: key,
		addr: crypto.PubkeyToAddress(key.PublicKey), signer: signer, feeCap: feeCap, c: cl, d: newDecider(spec, index), now: c.cfg.NowMicros}, nil
}

// pick returns the named markets in the order named (every market when
// names is empty); an unknown or repeated name is an error.
func pick(all []market, names []string) ([]market, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []market
	for i, n := range names {
		for _, prev := range names[:i] {
			if prev == n {
				return nil, fmt.Errorf("market %q named twice", n)
			}
		}
		found := false
		for _, m := range all {
			if m.Name == n {
				out, found = append(out, m), true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown market %q", n)
		}
	}
	return out, nil
}

// Status is what admin_bots answers.
type Status struct {
	State string      `json:"state"` // "none" before the first session
	Spec  string      `json:"spec,omitempty"`
	Error string      `json:"error,omitempty"`
	Bots  []BotStatus `json:"bots"`
}

// BotStatus is one bot's figures. Sent = Acked + the refusals + the
// errors of sending, once the bot is idle; Errors also counts failed reads.
type BotStatus struct {
	Name      string            `json:"name"`
	Role      string            `json:"role"`
	Market    string            `json:"market"`
	Address   string            `json:"address"`
	Sent      uint64            `json:"sent"`
	Acked     uint64            `json:"acked"`
	Refused   map[string]uint64 `json:"refused"`
	Errors    uint64            `json:"errors"`
	LastError string            `json:"last_error,omitempty"`
}

// Status reports the latest session.
func (c *Controller) Status() Status {
	c.mu.Lock()
	s := c.cur
	c.mu.Unlock()
	if s == nil {
		return Status{State: "none", Bots: []BotStatus{}}
	}
	s.mu.Lock()
	st := Status{State: s.state, Spec: s.spec.String(), Error: s.err, Bots: make([]BotStatus, 0, len(s.bots))}
	bots := s.bots
	s.mu.Unlock()
	for _, b := range bots {
		st.Bots = append(st.Bots, b.status())
	}
	return st
}

// status reads the bot's figures; safe while the bot acts.
func (b *bot) status() BotStatus {
	bs := BotStatus{Name: b.name, Role: b.role.String(), Market: b.market.Name, Address: b.addr.Hex(),
		Sent: b.sent.Load(), Acked: b.acked.Load(), Errors: b.errors.Load(), Refused: map[string]uint64{}}
	b.counters.mu.Lock()
	defer b.counters.mu.Unlock()
	for k, v := range b.refused {
		bs.Refused[k] = v
	}
	bs.LastError = b.lastError
	return bs
}

// AppendStatus appends Status as JSON (the admin_bots result).
func (c *Controller) AppendStatus(dst []byte) []byte {
	b, err := json.Marshal(c.Status())
	if err != nil {
		panic("BUG: bots: cannot encode the status: " + err.Error())
	}
	return append(dst, b...)
}
