package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/bench/bots"
)

// CallTimeout bounds each call of the player (an event, a time step, a
// read); a call past it fails the scenario.
const CallTimeout = 30 * time.Second

// Config configures a Player.
type Config struct {
	// AdminToken is the node's admin token: the player's calls carry it.
	AdminToken string
	// Logf reports progress, the end and a failure (nil: silent).
	Logf func(format string, args ...any)
	// NowMicros is the node's clock (the bots' deadlines follow it).
	NowMicros func() int64
}

// Player states, as lab_scenario reports them.
const (
	StateStarting = "starting" // resolving markets, funding the bots
	StateRunning  = "running"
	StateDone     = "done"    // played to duration_s; time stands still
	StateFailed   = "failed"  // see error; time stands where it failed
	StateStopped  = "stopped" // the node shut down first
)

// Status is what lab_scenario answers.
type Status struct {
	Name      string           `json:"name"`
	State     string           `json:"state"`
	Error     string           `json:"error,omitempty"`
	Seed      uint64           `json:"seed,string"`
	TS        float64          `json:"t_s"` // node time since the start, seconds
	DurationS float64          `json:"duration_s"`
	StepMs    float64          `json:"step_ms"`
	Step      int64            `json:"step"` // steps played
	Steps     int64            `json:"steps"`
	StartUs   int64            `json:"start_us"` // the node's time at t_s = 0
	Events    int              `json:"events"`   // oracle points and events applied
	BotTxs    uint64           `json:"bot_txs"`  // transactions the bots sent
	WallS     float64          `json:"wall_s"`   // wall time since the first step
	Hash      string           `json:"hash,omitempty"`
	Inputs    uint64           `json:"inputs,omitempty"` // with hash: the inputs it covers
	Bots      []bots.BotStatus `json:"bots"`
}

// Player plays one scenario against a node. AppendStatus is safe for
// concurrent use and never waits for the network (an event loop calls it).
type Player struct {
	sc  *Scenario
	cfg Config
	mu  sync.Mutex
	st  Status
	bot *bots.Lockstep // nil until funded, or without bots
}

// New returns a player of sc in state starting.
func New(sc *Scenario, cfg Config) *Player {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return &Player{sc: sc, cfg: cfg, st: Status{Name: sc.Name, State: StateStarting, Seed: sc.Seed,
		DurationS: float64(sc.DurationUs) / 1e6, Bots: []bots.BotStatus{}}}
}

// Run plays the scenario against the node listening at addr (host:port)
// and returns when it is played, failed or ctx ended. The node's clock
// must be manual and moved by nobody else.
func (p *Player) Run(ctx context.Context, addr string) error {
	err := p.play(ctx, addr)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil:
		p.st.State = StateDone
		p.cfg.Logf("scenario %s: played to t=%gs in %d steps, %.3f s of wall time (%.1f node s a wall s, %.2f ms a step): %d inputs, state hash %s",
			p.sc.Name, p.st.TS, p.st.Step, p.st.WallS, p.st.TS/p.st.WallS, 1e3*p.st.WallS/float64(p.st.Step), p.st.Inputs, p.st.Hash)
	case ctx.Err() != nil:
		p.st.State = StateStopped
	default:
		p.st.State, p.st.Error = StateFailed, err.Error()
		p.cfg.Logf("scenario %s: failed at t=%gs: %v", p.sc.Name, p.st.TS, err)
	}
	return err
}

// conn is the player's own connection, with the admin token.
type conn struct{ c *gethrpc.Client }

func (c conn) call(ctx context.Context, result any, method string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	if err := c.c.CallContext(ctx, result, method, args...); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

func (p *Player) play(ctx context.Context, addr string) error {
	addr = bots.LoopbackAddr(addr)
	cl, err := gethrpc.DialOptions(ctx, "ws://"+addr, gethrpc.WithHeader("Authorization", "Bearer "+p.cfg.AdminToken))
	if err != nil {
		return fmt.Errorf("cannot connect to ws://%s: %w", addr, err)
	}
	defer cl.Close()
	c := conn{cl}
	startUs, stepUs, markets, err := p.start(ctx, c, addr)
	if p.bot != nil {
		defer p.bot.Close()
	}
	if err != nil {
		return err
	}
	steps := p.st.Steps // start set it; only this goroutine writes the status
	wallStart := time.Now()
	tl := newTimeline(p.sc, markets)
	prog := progress{every: p.sc.ProgressUs, startUs: startUs}
	for k := range steps {
		t := k * stepUs
		fired, err := tl.fire(ctx, c, t)
		if err != nil {
			return err
		}
		var sent uint64
		if p.bot != nil {
			sent = p.bot.Step(ctx, startUs+t, stepUs)
		}
		if p.sc.Pace > 0 {
			select { // the user's strategy acts meanwhile
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(p.sc.Pace*float64(stepUs)) * time.Microsecond):
			}
		}
		if _, err := c.advance(ctx, stepUs); err != nil {
			return err
		}
		p.set(func(st *Status) {
			st.Step, st.TS, st.WallS = k+1, float64(t+stepUs)/1e6, time.Since(wallStart).Seconds()
			st.Events, st.BotTxs = st.Events+fired, st.BotTxs+sent
		})
		if err := prog.line(ctx, c, p, t+stepUs); err != nil {
			return err
		}
	}
	var h struct {
		Seq  hexutil.Uint64 `json:"seq"`
		Hash string         `json:"hash"`
	}
	if err := c.call(ctx, &h, "admin_stateHash"); err != nil {
		return err
	}
	p.set(func(st *Status) { st.Hash, st.Inputs = h.Hash, uint64(h.Seq) })
	return nil
}

// start resolves the markets, puts the clock on the tick grid and funds
// the bots; it answers the time of step 0, the step and the oracles'
// markets by name.
func (p *Player) start(ctx context.Context, c conn, addr string) (startUs, stepUs int64, markets map[string]*Market, err error) {
	if stepUs, markets, err = p.resolve(ctx, c); err != nil {
		return 0, 0, nil, err
	}
	now, err := c.advance(ctx, 0)
	if err != nil {
		return 0, 0, nil, err
	}
	startUs = (now + stepUs - 1) / stepUs * stepUs // the tick grid
	if _, err = c.advance(ctx, startUs-now); err != nil {
		return 0, 0, nil, err
	}
	steps := (p.sc.DurationUs + stepUs - 1) / stepUs
	p.set(func(st *Status) { st.StepMs, st.Steps, st.StartUs = float64(stepUs)/1e3, steps, startUs })
	if p.sc.Bots != nil {
		bcfg := bots.Config{AdminToken: p.cfg.AdminToken, Logf: p.cfg.Logf, NowMicros: p.cfg.NowMicros}
		ls, err := bots.StartLockstep(ctx, bcfg, addr, *p.sc.Bots)
		if err != nil {
			return 0, 0, nil, err
		}
		p.mu.Lock()
		p.bot = ls
		p.mu.Unlock()
	}
	p.set(func(st *Status) { st.State = StateRunning })
	p.cfg.Logf("scenario %s: seed %d, %g s of node time in %d steps of %g ms from %s, pace %g",
		p.sc.Name, p.sc.Seed, float64(p.sc.DurationUs)/1e6, steps, float64(stepUs)/1e3,
		time.UnixMicro(startUs).UTC().Format(time.RFC3339), p.sc.Pace)
	return startUs, stepUs, markets, nil
}

func (p *Player) set(f func(*Status)) {
	p.mu.Lock()
	f(&p.st)
	p.mu.Unlock()
}

// AppendStatus appends the status as JSON (the lab_scenario result).
func (p *Player) AppendStatus(dst []byte) []byte {
	p.mu.Lock()
	st := p.st
	if p.bot != nil {
		st.Bots = p.bot.Status()
	}
	p.mu.Unlock()
	b, err := json.Marshal(st)
	if err != nil {
		panic("BUG: scenario: cannot encode the status: " + err.Error())
	}
	return append(dst, b...)
}

// advance moves the manual clock by us and returns the node's time, once
// the ticks it made due are durable (admin_advanceTime).
func (c conn) advance(ctx context.Context, us int64) (int64, error) {
	var now hexutil.Uint64
	err := c.call(ctx, &now, "admin_advanceTime", hexutil.Uint64(us))
	return int64(now), err
}

// market is what the player needs of an ob_getMarkets entry.
type market struct {
	ID         common.Hash  `json:"id"`
	Name       string       `json:"name"`
	Type       string       `json:"market_type"`
	Step       *hexutil.Big `json:"tick_precision"`
	IntervalUs int64        `json:"auction_interval"`
}

// resolve reads the markets: the step (the greatest common divisor of
// their auction intervals) and the markets the file names (Check).
func (p *Player) resolve(ctx context.Context, c conn) (stepUs int64, found map[string]*Market, err error) {
	var ms []market
	if err := c.call(ctx, &ms, "ob_getMarkets"); err != nil {
		return 0, nil, err
	}
	for _, m := range ms {
		if m.IntervalUs <= 0 {
			return 0, nil, fmt.Errorf("ob_getMarkets: market %q has interval %d", m.Name, m.IntervalUs)
		}
		stepUs = gcd(stepUs, m.IntervalUs)
	}
	if stepUs == 0 {
		return 0, nil, fmt.Errorf("ob_getMarkets: no market")
	}
	found, err = Check(p.sc, func(name string) *Market {
		for _, m := range ms {
			if m.Name == name {
				found := &Market{ID: m.ID, Perp: m.Type == "perpetual"}
				if m.Step != nil {
					found.Step.SetFromBig(m.Step.ToInt())
				}
				return found
			}
		}
		return nil
	})
	return stepUs, found, err
}

// Market is what a scenario needs to know of a market.
type Market struct {
	ID   common.Hash
	Perp bool
	Step uint256.Int // price step (tick precision), wei
}

// Check resolves the markets sc names with lookup (nil: no market of that
// name): each oracle point's and walk's market must be a perp market, a
// point's price a multiple of its price step, and the bots' markets must
// exist. It returns the markets found, by name. ledgerd checks a file
// against the dev markets with it before it opens the data directory.
func Check(sc *Scenario, lookup func(name string) *Market) (map[string]*Market, error) {
	found := map[string]*Market{}
	perp := func(where, name string) (*Market, error) {
		m := lookup(name)
		switch {
		case m == nil:
			return nil, fmt.Errorf("%s.market: no market %q", where, name)
		case !m.Perp:
			return nil, fmt.Errorf("%s.market: %s is a spot market: it has no oracle", where, name)
		}
		found[name] = m
		return m, nil
	}
	for i, o := range sc.Oracle {
		m, err := perp(fmt.Sprintf("oracle[%d]", i), o.Market)
		if err != nil {
			return nil, err
		}
		if m.Step.IsZero() || !new(uint256.Int).Mod(&o.Price, &m.Step).IsZero() {
			return nil, fmt.Errorf("oracle[%d].price: %s wei is not a multiple of %s's price step (%s wei)", i, o.Price.Dec(), o.Market, m.Step.Dec())
		}
	}
	for i, w := range sc.Walks {
		if _, err := perp(fmt.Sprintf("oracle_walk[%d]", i), w.Market); err != nil {
			return nil, err
		}
	}
	if sc.Bots != nil {
		for _, name := range sc.Bots.Markets {
			if lookup(name) == nil {
				return nil, fmt.Errorf("bots: no market %q", name)
			}
		}
	}
	return found, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// progress prints a line every `every` µs of node time: the time, the
// inputs applied, the bots' transactions and their fills since the last
// line.
type progress struct {
	every, startUs, lastUs int64
}

func (pr *progress) line(ctx context.Context, c conn, p *Player, t int64) error {
	if t/pr.every == pr.lastUs/pr.every && t < p.sc.DurationUs {
		return nil
	}
	var h struct {
		Seq hexutil.Uint64 `json:"seq"`
	}
	if err := c.call(ctx, &h, "admin_stateHash"); err != nil {
		return err
	}
	fills := 0
	p.mu.Lock()
	st := p.st
	p.mu.Unlock()
	if p.bot != nil {
		for _, b := range p.bot.Status() {
			// Fills carry their tick's time: this line counts the ticks
			// after the last line's, up to this one.
			n, err := c.fills(ctx, common.HexToAddress(b.Address), pr.startUs+pr.lastUs+1, pr.startUs+t+1)
			if err != nil {
				return err
			}
			fills += n
		}
	}
	pr.lastUs = t
	p.cfg.Logf("scenario %s: t=%gs/%gs step %d/%d, %d inputs, %d bot txs, %d bot fills since the last line",
		p.sc.Name, st.TS, st.DurationS, st.Step, st.Steps, uint64(h.Seq), st.BotTxs, fills)
	return nil
}

// fills counts account's fills stamped in [fromUs, toUs).
func (c conn) fills(ctx context.Context, account common.Address, fromUs, toUs int64) (int, error) {
	q := map[string]any{"from_ts": fromUs, "to_ts": toUs}
	n := 0
	for {
		var page struct {
			Fills []json.RawMessage `json:"fills"`
			Next  *string           `json:"next_cursor"`
		}
		if err := c.call(ctx, &page, "ob_getFills", account, q); err != nil {
			return n, err
		}
		n += len(page.Fills)
		if page.Next == nil {
			return n, nil
		}
		q["cursor"] = *page.Next
	}
}
