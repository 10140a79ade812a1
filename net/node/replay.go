package node

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"strconv"

	"github.com/holiman/uint256"
	"github.com/valyala/fastjson"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
	"github.com/ledgervenue/node/net/subs"
	"github.com/ledgervenue/node/persist"
)

// Offline replay (ledgerd replay, docs/replay.md). Replay re-runs a data
// directory's intent log from genesis in the calling goroutine: no
// listener, no writer, attester or ticker, no clock (every time it uses is
// an input's own), and the directory opened read-only. It applies each
// input through the code the live sequencer runs (core.Ledger.Apply, then
// afterApply, which builds each tick's subscription data with buildTick),
// so a replay computes what the session computed.
//
// Invariants:
//
//   - Deterministic: two replays of one directory write the same bytes
//     (inputs in log order; no map order, clock or randomness reaches the
//     output).
//   - Read-only: the directory is byte-for-byte unchanged afterwards
//     (persist.OpenReadOnly); a directory a running node holds is refused.
//   - The final line is the state admin_stateHash answers on the live node
//     after the same inputs.
//
// The genesis: Open stores the node's genesis description in the log
// (storeGenesis, persist's "genesis" key) each time it starts, so the
// replay uses the genesis the node last ran with. A directory written
// before that takes ReplayConfig.Genesis (ledgerd replay's genesis flags).

// genesisVersion is the version of the stored genesis description.
const genesisVersion = 1

// genesisDesc is the stored genesis description: everything of Config that
// the state after the log depends on, as JSON (version genesisVersion).
type genesisDesc struct {
	Version                int                 `json:"version"`
	ChainID                uint64              `json:"chain_id"`
	BaseFee                uint256.Int         `json:"base_fee"`
	Validators             int                 `json:"validators"`
	CommitteeSeed          []byte              `json:"committee_seed"`
	Orderbook              clob.Limits         `json:"orderbook_limits"`
	Bridge                 core.BridgeConfig   `json:"bridge"`
	WithdrawalsPerBatchMax int                 `json:"withdrawals_per_batch_max"`
	MintAllowed            bool                `json:"mint_allowed,omitempty"`
	Allocs                 []Alloc             `json:"allocs"`
	Markets                []clob.MarketConfig `json:"markets"`
}

// storeGenesis stores the genesis the node runs under (Open calls it once
// the state is restored), replacing the stored one if the configuration
// changed since the last start.
func (n *Node) storeGenesis() error {
	c := &n.cfg
	d := genesisDesc{Version: genesisVersion, ChainID: c.ChainID, BaseFee: c.BaseFee, Validators: c.Validators,
		CommitteeSeed: c.CommitteeSeed, Orderbook: c.Orderbook, Bridge: c.Bridge,
		WithdrawalsPerBatchMax: c.WithdrawalsPerBatchMax, MintAllowed: c.MintAllowed, Allocs: c.Genesis, Markets: c.Markets}
	b, err := json.Marshal(&d)
	if err != nil {
		return fmt.Errorf("cannot encode the genesis description: %w", err)
	}
	return n.log.SetGenesis(b)
}

// loadGenesis reads the stored genesis description into a Config; ok is
// false when the directory stores none.
func loadGenesis(lg *persist.Log) (cfg Config, ok bool, err error) {
	b, err := lg.Genesis()
	if err != nil || b == nil {
		return cfg, false, err
	}
	var d genesisDesc
	if err := json.Unmarshal(b, &d); err != nil || d.Version != genesisVersion {
		return cfg, false, fmt.Errorf("the stored genesis description does not decode (version %d, this build reads %d): %v", d.Version, genesisVersion, err)
	}
	return Config{ChainID: d.ChainID, BaseFee: d.BaseFee, Validators: d.Validators, CommitteeSeed: d.CommitteeSeed,
		Orderbook: d.Orderbook, Bridge: d.Bridge, WithdrawalsPerBatchMax: d.WithdrawalsPerBatchMax,
		MintAllowed: d.MintAllowed, Genesis: d.Allocs, Markets: d.Markets}, true, nil
}

// ReplayProgressEvery is how many inputs pass between two calls of
// ReplayConfig.Progress.
const ReplayProgressEvery = 4096

// ReplayConfig configures Replay.
type ReplayConfig struct {
	DataDir string
	// Genesis is the genesis of a data directory that stores none (written
	// by a ledgerd before the genesis was stored): ChainID, BaseFee,
	// Orderbook, Bridge, WithdrawalsPerBatchMax, MintAllowed, Genesis and Markets as the
	// node was started with. Ignored when the directory stores one; nil
	// refuses such a directory.
	Genesis *Config
	// Out receives a line per auction tick, then the final state (format in
	// docs/replay.md). Required.
	Out io.Writer
	// Frames, when set, receives the subscription frames the ticks publish
	// (ReplayChannels), one JSON line each.
	Frames io.Writer
	// Accounts adds the frames of svc_positions and svc_triggers for each
	// of these accounts (at most ReplayAccountsMax), subscribed at genesis.
	Accounts []core.Address
	// Progress, when set, is called every ReplayProgressEvery inputs with
	// the inputs replayed and the log's length.
	Progress func(done, total uint64)
	// Index, when set, is called with the market index once the whole log
	// is replayed (ledgerd replay --report reads the strategy report
	// there, as lab_strategyReport does live); its error ends the replay.
	Index func(x *marketdata.Index) error
}

// ReplayResult is what a replay ends with.
type ReplayResult struct {
	// Seq and Hash are the inputs applied and the state hash after them.
	Seq  uint64
	Hash core.Hash
	// Ticks counts the auction ticks replayed, Frames the frames written.
	Ticks, Frames uint64
}

// ReplayAccountsMax bounds ReplayConfig.Accounts (ledgerd replay
// --accounts): two subscriptions each, on a hub that allows
// subs.SubsPerConnMax per connection.
const ReplayAccountsMax = 64

// ReplayChannels are the subscription channels Replay writes frames of,
// each subscribed with no filter (params {}) before the first input: the
// channels fed by the auction ticks alone. Left out (docs/replay.md):
// svc_positions and svc_triggers (per account: ReplayConfig.Accounts adds
// them for the accounts it names; an account's positions frames equal a
// live subscriber's if that account was watched live from the session's
// start, since a tick carries a watched account's mark moves), newHeads (idle
// slots come from the wall clock, not the log), and the receipt channels
// (logs, svc_accountReceipts, svc_confirmedReceipts: attestation batches
// are formed by the committee's timing, not by the log).
var ReplayChannels = []string{"svc_orderbook", "svc_orders", "svc_orders_v2", "svc_candles", "svc_markets",
	"svc_withdrawals", "svc_transfers"}

// Replay re-runs cfg.DataDir's intent log from genesis offline (see the
// comment at the top of this file) and writes the state after every tick
// and at the end to cfg.Out, and the published frames to cfg.Frames.
func Replay(cfg ReplayConfig) (ReplayResult, error) {
	var res ReplayResult
	lg, err := persist.OpenReadOnly(cfg.DataDir)
	if err != nil {
		return res, err
	}
	defer lg.Close()
	gen, ok, err := loadGenesis(lg)
	switch {
	case err != nil:
		return res, err
	case !ok && cfg.Genesis == nil:
		return res, fmt.Errorf("%q stores no genesis description (written by an older ledgerd): give the genesis flags the node was started with (--dev, --base-fee, …)", cfg.DataDir)
	case !ok:
		gen = *cfg.Genesis
	}
	if first := lg.FirstSeq(); first > 1 {
		return res, fmt.Errorf("the log of %q starts at input %d: retention (--retain) deleted the inputs before it, and a replay from genesis needs them all", cfg.DataDir, first)
	}
	n, err := newReplayNode(gen)
	if err != nil {
		return res, err
	}
	if len(cfg.Accounts) > ReplayAccountsMax {
		return res, fmt.Errorf("%d accounts, at most %d", len(cfg.Accounts), ReplayAccountsMax)
	}
	var fw *frameWriter
	if cfg.Frames != nil {
		if fw, err = n.subscribeFrames(cfg.Frames, cfg.Accounts); err != nil {
			return res, err
		}
		n.pubMu.Lock()
		n.pub = fw // the watched accounts' mark moves, as a live hub's subscriptions
		n.pubMu.Unlock()
	}
	total := lg.Len()
	var line []byte
	err = lg.Replay(0, func(seq uint64, in *core.Input) error {
		rec, rej := n.ledger.Apply(in)
		if !rej.OK() {
			return fmt.Errorf("intent log seq %d does not apply (reject code %d): the log and the genesis disagree", seq, rej.Code)
		}
		var e *Entry
		if rec != nil {
			n.ledger.Settle(rec)
			if in.Kind == core.InputTick {
				// Not durable: afterApply builds its subscription data, as
				// live; durable (as at start-up) when no frames are wanted.
				e = &Entry{Rec: rec}
				e.durable.Store(fw == nil)
			}
		}
		n.afterApply(in, rec, e)
		if e != nil {
			res.Ticks++
			h := n.ledger.StateHash()
			line = strconv.AppendInt(append(line[:0], "tick_us="...), n.lastTickUs, 10)
			line = strconv.AppendUint(append(line, " seq="...), seq, 10)
			line = append(hex.AppendEncode(append(line, " hash=0x"...), h[:]), '\n')
			if _, err := cfg.Out.Write(line); err != nil {
				return err
			}
			if fw != nil {
				fw.PublishTick(e.publish)
				if fw.err != nil {
					return fw.err
				}
			}
		}
		if cfg.Progress != nil && seq%ReplayProgressEvery == 0 {
			cfg.Progress(seq, total)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	if ob := n.ledger.Orderbook(); ob.Staging() {
		// The log ends inside a staged run (the node stopped while a tick
		// cleared): its orders join their books, as a restarted node
		// joins them before anything else (joinStagedRun).
		ob.JoinStaged()
	}
	if cfg.Index != nil {
		if err := cfg.Index(n.market.idx); err != nil {
			return res, err
		}
	}
	res.Seq, res.Hash = n.ledger.Seq(), n.ledger.StateHash()
	if fw != nil {
		res.Frames = fw.count
	}
	_, err = cfg.Out.Write(append(AppendStateHash(nil, res.Seq, res.Hash), '\n'))
	return res, err
}

// AppendStateHash appends {seq, hash}: admin_stateHash's answer, and the
// last line of a replay, so the two compare byte for byte.
func AppendStateHash(dst []byte, seq uint64, h core.Hash) []byte {
	dst = jsonrpc.AppendQuantity(append(dst, `{"seq":`...), seq)
	dst = jsonrpc.AppendData(append(dst, `,"hash":`...), h[:])
	return append(dst, '}')
}

// newReplayNode is a Node with only the state the sequencer keeps (ledger,
// market index, perp views), at genesis: none of the pipeline's goroutines,
// queues or log. Only the apply path (afterApply and what it calls) may
// run on it.
func newReplayNode(cfg Config) (*Node, error) {
	cfg.defaultOrderbookLimits()
	n := &Node{cfg: cfg}
	if err := n.initGenesis(); err != nil {
		return nil, err
	}
	return n, nil
}

// frameWriter writes the frames of a replay's subscriptions: a subs.Hub
// driven by hand (Pump after each tick, no goroutine), with one frameConn
// per channel.
type frameWriter struct {
	hub   *subs.Hub
	w     io.Writer
	buf   []byte
	err   error // the first write error
	count uint64
}

// frameConn is one subscription's connection: it turns each notification
// into a frame line, {"channel":C,"params":{},"result":R}.
type frameConn struct {
	fw     *frameWriter
	prefix []byte
}

func (c *frameConn) Send(_, body, _ []byte) bool {
	fw := c.fw
	if fw.err != nil {
		return true // reported once the tick is fanned out
	}
	fw.buf = append(append(append(fw.buf[:0], c.prefix...), body...), "}\n"...)
	_, fw.err = fw.w.Write(fw.buf)
	fw.count++
	return true
}

// SendClose drops the close notification: the replay never closes a
// subscription (its hub is never closed, and never lags: it is pumped after
// every tick).
func (c *frameConn) SendClose([]byte) {}

func (c *frameConn) RemoteIP() netip.Addr { return netip.IPv6Loopback() }

// subscribeFrames subscribes a hand-driven hub to ReplayChannels and to
// each account's svc_positions and svc_triggers, at genesis: the state
// channels' snapshots are the genesis markets and balances.
func (n *Node) subscribeFrames(w io.Writer, accounts []core.Address) (*frameWriter, error) {
	fw := &frameWriter{w: w}
	fw.hub = subs.New(subs.Config{ReplayTicks: ReplayTicks, Positions: n.positionsLocked, Triggers: n.triggersLocked,
		Markets: func() []marketdata.Market { return n.market.idx.Markets(nil) }})
	var p fastjson.Parser
	sub := func(ch, params string) error {
		c := &frameConn{fw: fw, prefix: []byte(`{"channel":"` + ch + `","params":` + params + `,"result":`)}
		v, err := p.Parse(params)
		if err != nil {
			return err
		}
		id, rerr := fw.hub.Subscribe(c, []byte(ch), v)
		if rerr != nil {
			return fmt.Errorf("cannot subscribe %s %s: %s", ch, params, rerr.Message)
		}
		fw.hub.Activate(c, id)
		return nil
	}
	for _, ch := range ReplayChannels {
		if err := sub(ch, `{}`); err != nil {
			return nil, err
		}
	}
	for _, a := range accounts {
		params := string(jsonrpc.AppendData([]byte(`{"account":`), a[:])) + `}`
		for _, ch := range []string{"svc_positions", "svc_triggers"} {
			if err := sub(ch, params); err != nil {
				return nil, err
			}
		}
	}
	return fw, fw.err
}

// PublishTick fans t out to the frames (the first write error stays in
// fw.err). A tick that does not chain on the previous one is an error too.
func (fw *frameWriter) PublishTick(t *tickrec.Tick) {
	if err := fw.hub.PublishTick(t); err != nil && fw.err == nil {
		fw.err = fmt.Errorf("the log's ticks do not chain: %w", err)
	}
	fw.hub.Pump()
}

// WatchedPositions are the accounts with an svc_positions subscription.
func (fw *frameWriter) WatchedPositions(dst []clob.Address) []clob.Address {
	return fw.hub.WatchedPositions(dst)
}

// Attested and IdleSlot are not called: a replay runs no attester and no
// ticker.
func (fw *frameWriter) Attested([]Receipt)                     {}
func (fw *frameWriter) IdleSlot(tickrec.Tick, int64)           {}
func (fw *frameWriter) Reverted([]*tickrec.Tick, int64, error) {} // a replay never replaces its state
