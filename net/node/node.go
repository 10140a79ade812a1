package node

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/persist"
)

// MaxInflight bounds the inputs waiting for durability or attestation.
const MaxInflight = 1 << 16

// Default orderbook limits per market: live orders, and intents waiting for
// their tick (a power of two).
const (
	DefaultOrdersMax  = 1 << 18
	DefaultPendingMax = 1 << 14
)

// writerGroupMax bounds one group commit (one Badger transaction).
const writerGroupMax = 4096

var (
	// ErrOverloaded refuses a write while MaxInflight inputs are in flight.
	ErrOverloaded = errors.New("node overloaded: too many inputs awaiting durability")
	// ErrStopped refuses a write after Close.
	ErrStopped = errors.New("node is not accepting writes")
	// ErrLogFailed refuses a write after the intent log could not be
	// written (a full or failing disk): the node serves reads and takes no
	// write until it is restarted.
	ErrLogFailed = errors.New("node is not accepting writes: its intent log could not be written (a full or failing disk? the node's log says why); reads still work")
	// ErrDuplicateDeposit refuses a deposit whose id was already credited.
	ErrDuplicateDeposit = errors.New("deposit already credited")
)

// Alloc is a genesis credit.
type Alloc struct {
	Token, Account core.Address
	Amount         uint256.Int
}

// History defaults (docs/decisions.md, "History on disk").
const (
	// DefaultCacheEntries is how many of the newest attested records stay
	// in RAM besides the history on disk.
	DefaultCacheEntries = 32768
	// DefaultSnapshotEvery and DefaultSnapshotInterval: a snapshot is taken
	// after this many inputs, or this long after the previous one if any
	// input arrived since.
	DefaultSnapshotEvery    = 100_000
	DefaultSnapshotInterval = 5 * time.Minute
	// snapshotsKept is how many snapshots stay on disk: the newest, and an
	// older one to fall back on if the newest cannot be read.
	snapshotsKept = 2
)

// Config configures a node.
type Config struct {
	DataDir       string
	ChainID       uint64
	BaseFee       uint256.Int
	Validators    int
	CommitteeSeed []byte
	// Clock is the time source (nil: the wall clock). The node reads it
	// through a floor that never lets its time go backwards (monotonic).
	Clock   Clock
	Genesis []Alloc
	// Markets are created at genesis, before the log is replayed.
	Markets []clob.MarketConfig
	// Bridge is the bridge configuration (docs/bridge.md §1).
	Bridge core.BridgeConfig
	// WithdrawalsPerBatchMax bounds the withdrawals one withdrawal batch
	// executes; the rest are not_included (0:
	// core.DefaultWithdrawalsPerBatchMax).
	WithdrawalsPerBatchMax int
	// MintAllowed lets the Mint application mint (docs/faucet.md; ledgerd
	// --dev). Part of the genesis: a log with mints replays only with it.
	MintAllowed bool
	// Orderbook bounds the engine's memory per market.
	Orderbook clob.Limits
	// CacheEntries bounds the attested records kept in RAM (0: the
	// default); older ones are read from disk.
	CacheEntries int
	// SnapshotEvery and SnapshotInterval schedule snapshots (0: the
	// defaults; SnapshotEvery < 0 turns them off).
	SnapshotEvery    int
	SnapshotInterval time.Duration
	// IgnoreSnapshots replays the whole log at start-up, as if no snapshot
	// were stored: to check that a snapshot and the log agree.
	IgnoreSnapshots bool
	// Retain bounds the history on disk by age (0: keep everything);
	// retain.go says what pruning removes.
	Retain time.Duration
	// TrimMappedEvery is how often the store's mapped table and log pages are
	// handed back to the kernel (trim.go; 0: the default, < 0: never).
	TrimMappedEvery time.Duration
	// BeforeAppend, when set, runs on the writer before each group commit.
	// Tests use it to hold inputs in the applied-but-not-durable state, and
	// to fail a group commit as a failing disk would: an error it returns
	// is the commit's.
	BeforeAppend func() error
	// BeforeStore, when set, runs on the storer before each group's store
	// write, after its inputs (how many: inputs) are durable and
	// acknowledged. Tests use it to stop the node between the two writes
	// (an error it returns is the store write's; ledgerd's fault hook kills
	// the process there).
	BeforeStore func(inputs int) error
	// DuringTick, when set, runs inside every auction tick, under the
	// sequencer lock, before the ledger finishes the tick. Tests use it to
	// hold a tick while they read (the read-stall test).
	DuringTick func()
	// DuringClearing, when set, runs inside every auction tick on a
	// goroutine of its own, beside the clearing of its books, without the
	// sequencer lock; the tick goes on once both are done (market.go,
	// runTick). Tests use it to hold a tick while transactions are
	// admitted.
	DuringClearing func()
	// DuringDownstream, when set, runs after every live auction tick on a
	// goroutine of its own, beside the tick's downstream stage, without
	// the sequencer lock (downstream.go); the next tick waits for both.
	// Tests use it to hold the stage while transactions are admitted.
	DuringDownstream func()
	// DuringIndexStep, when set, runs inside every live tick's downstream
	// stage while the market index is locked for its step (downstream.go).
	// Tests use it to hold the index-only ob_ reads.
	DuringIndexStep func()
	// InlineDownstream builds each tick's downstream stage under the
	// sequencer lock, right after the tick applies, as a replay does: for
	// the tests that compare the two (TestDownstreamEqualsInline).
	InlineDownstream bool
	// Logf reports fatal pipeline errors and start-up decisions (a
	// snapshot skipped); nil discards them.
	Logf func(format string, args ...any)
	// Follow starts the node as a follower (follow.go): it applies what
	// ApplyFrames hands it and refuses writes until Promote.
	Follow bool
	// AfterAppend, when set, runs on the syncer after each group's
	// fdatasync, before anything of the group is acknowledged or
	// attested: replication that acknowledges only what a stream holds
	// waits there (net/replicate). An error it returns stops the node as a
	// failed log write does.
	AfterAppend func() error
	// Replicated refuses what a stream of frames cannot carry to
	// followers: evm_revert and anvil_loadState replace the whole state.
	Replicated bool
}

// ledgerConfig is the ledger's genesis configuration.
func (cfg *Config) ledgerConfig() core.Config {
	return core.Config{ChainID: cfg.ChainID, BaseFee: cfg.BaseFee, Orderbook: cfg.Orderbook, Bridge: cfg.Bridge,
		WithdrawalsPerBatchMax: cfg.WithdrawalsPerBatchMax, MintAllowed: cfg.MintAllowed}
}

// Node is the running ledger service. Its methods are safe for concurrent use.
type Node struct {
	cfg Config
	// clock is the node's time: cfg.Clock, never going backwards. Every
	// admission stamp, attestation time, tick and past-perfect time is read
	// from it.
	clock     *monotonic
	committee *attest.Committee
	log       *persist.Log

	// mu guards the state (below, and the fields state's doc names).
	mu sync.RWMutex
	state
	// ticking is true while a tick's books clear without mu (market.go,
	// runTick; clearing is true then too) or its downstream stage runs
	// (downstream.go): only transactions are admitted then, staged;
	// whatever else takes mu to change or read the ledger waits on
	// tickDone. Guarded by mu.
	ticking, clearing bool
	// deferTick: the tick being applied leaves its downstream stage in
	// downstream for runTick to run without mu, instead of in line.
	// Guarded by mu.
	deferTick  bool
	downstream *tickDownstream
	// liqEquity is what Node.equity answers for the accounts the tick
	// liquidated while its downstream runs (nil otherwise; written under
	// mu, read under it or by the downstream on the same goroutine).
	liqEquity map[clob.Address]clob.Signed
	tickDone  *sync.Cond // L is &mu; broadcast when ticking ends
	// tickMu serialises RunDueTicks (the ticker, admin_advanceTime).
	tickMu sync.Mutex
	// lab is the strategy lab's armed skips and holds (lab.go).
	lab labFaults
	// views is the read views of the state (readviews.go): what the hot
	// reads load without mu. Replaced with the state (load, revert).
	views atomic.Pointer[readViews]
	// recentMu guards state.recent and state.attestedEnd, so that the
	// listings (receiptsAt, placeRange) never wait for the sequencer:
	// whoever changes them (the attester, a revert) takes it inside mu,
	// readers take it alone.
	recentMu sync.RWMutex
	// idxMu guards the market index's contents for ReadIndex: the
	// sequencer takes it inside mu for each change of the index
	// (applyViews), a revert for its swap; ReadIndex's readers take it
	// alone, so they wait for the index's own updates, never for an
	// auction.
	idxMu sync.RWMutex
	// waitMu guards the entries' waiters (OnAttested), so that adding
	// one never waits for the sequencer: the attester takes it after it
	// set the batches, to take them.
	waitMu sync.Mutex
	// pastPerfect is the newest past-perfect time reported: it never
	// decreases either (but across a revert, revert.go).
	pastPerfect floor
	ppView      pastPerfectView // what PastPerfectTime reads, lock-free
	// lastTick is the state's lastTickUs and lastTickHash for readers
	// (LastTick), lock-free; nil before any tick.
	lastTick atomic.Pointer[TickRef]
	metrics  metrics
	stats    stats   // the Prometheus metrics' sources (stats.go)
	ranking  ranking // ByPnL's (perp.go)
	// pubMu guards pub for the storer and the attester, which read it
	// without mu (they never wait for a tick); whoever sets pub takes it
	// inside mu.
	pubMu sync.RWMutex
	// pub receives durable ticks and attested receipts (nil: nobody
	// subscribes).
	pub        Publisher
	snap       snapshotter
	follow     followState // a follower's (follow.go)
	batches    batchCache
	logScanMax int // LogScanMax; tests lower it

	// faults are the committee's injected faults (faults.go): not logged.
	faults faultBox
	// evm holds the evm_snapshot states and serializes the controls that
	// replace the whole state (revert.go).
	evm evmSnapshots

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// state is what load builds from the store and genesis: everything a
// revert (revert.go) replaces at once, under Node.mu with the pipeline
// stopped. Guarded by Node.mu; the queues and channels are read freely by
// the pipeline's goroutines (started after a replacement, stopped before
// the next) and under the lock by everyone else (quitCh).
type state struct {
	// genesisHash is the state hash before any input: a snapshot taken
	// under another genesis is not used.
	genesisHash core.Hash
	ledger      *core.Ledger
	// entries holds the records not yet attested, and the newest attested
	// ones (recent); the rest of history is on disk.
	// It is safe for concurrent use: readers look records up without mu
	// (Lookup); only the sequencer and the attester change it, under mu.
	entries entryIndex
	// recent is the newest attested records, by place; guarded by
	// Node.recentMu as well as mu.
	recent ring
	// rviews is the read views the sequencer publishes into (readviews.go).
	rviews *readViews
	// records counts the records applied: the next one's place.
	records uint64
	// attestedEnd is the place after the newest attested record: every
	// place before it is in the history on disk. Guarded by Node.recentMu
	// as well as mu.
	attestedEnd uint64
	inflight    *atomic.Int64 // inputs applied but not yet attested (the attester lowers it)
	// stopErr, once set, refuses every write: ErrStopped or ErrLogFailed.
	stopErr error
	// awaiting maps the Seq of each admitted orderbook transaction and
	// withdrawal (core.LandsInTick) to it until the tick it lands in has run.
	awaiting map[uint64]awaitRef
	market   *marketViews
	perp     perpViews // perp bookkeeping for publishing (perpsubs.go)
	// lastTickHash chains the published ticks.
	lastTickHash clob.Hash
	lastTickUs   int64
	// nextBatchSeq is the sequence number of the next attestation batch:
	// one after the newest stored batch, so none is ever signed twice.
	nextBatchSeq uint64
	// replayedFrom is the snapshot start-up loaded (the inputs it covers; 0:
	// none, the log was replayed from genesis).
	replayedFrom uint64

	admitQ  *queue[admission]
	settles *settleQueue // durable records to settle (pipeline.go)
	attestQ *queue[*Entry]
	// The writer's stages (pipeline.go): groups go writer → toSync →
	// syncer → toStore → storer, and back to freeGroups.
	toSync, toStore, freeGroups chan *writeGroup
	// claimWake wakes the claimer (withdrawals.go) after a durable
	// withdrawal batch.
	claimWake chan struct{}
	quit      chan struct{}
}

// awaitRef is an orderbook transaction waiting for its tick: its entry
// while it is in RAM (nil once only the history has it).
type awaitRef struct {
	hash core.Hash
	e    *Entry
}

// admission is what the writer stores with its next group commit: an
// applied input (with the tick links of a tick), an attestation batch,
// withdrawal claims, or a snapshot.
type admission struct {
	in     *core.Input
	entry  *Entry // nil for inputs without a record (base-fee changes)
	links  []persist.TickLink
	batch  *persist.Batch
	claims []persist.Claim
	snap   *persist.Snapshot
	// body is a live tick whose subscription record its downstream stage
	// built after the tick's input was queued (downstream.go): stored and
	// published with this group, and the tick answered then.
	body *Entry
	// done answers the admission; nil for a tick's input whose record
	// comes later (body).
	done func(*Entry, error)
}

// answeredStored reports whether a is answered once its group is stored,
// not as soon as its inputs are durable: a tick (what a reader asks of it
// right after, its links, published tick and withdrawal rows, is stored
// then) and everything that is not an input.
func (a *admission) answeredStored() bool { return a.in == nil || a.in.Kind == core.InputTick }

// answer runs a's done, if it has one.
func (a *admission) answer(e *Entry, err error) {
	if a.done != nil {
		a.done(e, err)
	}
}

// defaultOrderbookLimits replaces zero orderbook limits with the defaults
// (a node's, and a replay's of a directory that stores no genesis).
func (c *Config) defaultOrderbookLimits() {
	if c.Orderbook.OrdersMax == 0 {
		c.Orderbook.OrdersMax = DefaultOrdersMax
	}
	if c.Orderbook.PendingMax == 0 {
		c.Orderbook.PendingMax = DefaultPendingMax
	}
}

// Open replays the log in cfg.DataDir and starts the pipeline.
func Open(cfg Config) (*Node, error) {
	if cfg.Validators < 1 || cfg.Validators > attest.MaxCommitteeSize {
		return nil, fmt.Errorf("committee size must be 1..%d, got %d", attest.MaxCommitteeSize, cfg.Validators)
	}
	if cfg.Clock == nil {
		cfg.Clock = WallClock{}
	}
	cfg.defaultOrderbookLimits()
	if cfg.CacheEntries <= 0 {
		cfg.CacheEntries = DefaultCacheEntries
	}
	if cfg.SnapshotEvery == 0 {
		cfg.SnapshotEvery = DefaultSnapshotEvery
	}
	if cfg.SnapshotInterval <= 0 {
		cfg.SnapshotInterval = DefaultSnapshotInterval
	}
	if cfg.TrimMappedEvery == 0 {
		cfg.TrimMappedEvery = TrimMappedEveryDefault
	}
	lg, err := persist.Open(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if err := lg.KeepTicks(ReplayTicks + 1); err != nil {
		lg.Close()
		return nil, err
	}
	n := &Node{
		cfg:        cfg,
		clock:      &monotonic{src: cfg.Clock},
		committee:  attest.NewCommittee(cfg.CommitteeSeed, cfg.Validators, 0),
		log:        lg,
		logScanMax: LogScanMax,
	}
	n.tickDone = sync.NewCond(&n.mu)
	n.lab.skipAfter = -1
	n.initFaults()
	n.dropEvmSnapshots() // left by a run that did not close
	n.metrics.start = time.Now()
	n.stats.init(&n.metrics)
	if err := n.load(); err != nil {
		lg.Close()
		return nil, err
	}
	if err := n.storeGenesis(); err != nil { // for ledgerd replay (replay.go)
		lg.Close()
		return nil, err
	}
	n.views.Store(n.rviews)
	n.snap.init(n)
	if cfg.Follow {
		n.follow.on.Store(true)
		n.follow.batches = newQueue[*persist.Batch]()
		n.follow.nextBatch = n.nextBatchSeq
		n.startPipeline()
		return n, nil // the leader ends a staged run (joinStagedRun)
	}
	n.startPipeline()
	if err := n.joinStagedRun(); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// joinStagedRun ends a staged run the log ends with (the node stopped
// while a tick cleared: its staged transactions are durable, the tick is
// not): a logged input that changes nothing, the clock offset as it is,
// makes the ledger join their orders to the books now, and a replay at the
// same place (core/clob/stage.go). Until then no snapshot can be taken.
func (n *Node) joinStagedRun() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.ledger.Orderbook().Staging() {
		return nil
	}
	_, err := n.submitLocked(&core.Input{Kind: core.InputClockOffset, TimeUs: n.ledger.ClockOffset()}, func(*Entry, error) {})
	return err
}

// load builds the node's state from nothing: genesis, then the newest
// usable snapshot and the log after it (restore). Open calls it, and a
// revert (revert.go) calls it on a scratch node over the restored store.
func (n *Node) load() error {
	if err := n.initGenesis(); err != nil {
		return err
	}
	start := time.Now()
	if err := n.restore(); err != nil {
		return err
	}
	n.market.idx.SyncPerp() // a snapshot's index comes without the engine's perp state
	n.rebuildViews()
	if n.log.Len() > 0 {
		n.Logf("state restored in %v: snapshot at input %d, then %d inputs of the log replayed; %d records to attest",
			time.Since(start).Round(time.Millisecond), n.replayedFrom, n.log.Len()-n.replayedFrom, n.inflight.Load())
	}
	return nil
}

// initGenesis sets the state to genesis, before any input: where load
// replays the store from, and a replay (replay.go) the log.
func (n *Node) initGenesis() error {
	cfg := &n.cfg
	n.state = state{
		ledger:   core.NewLedger(cfg.ledgerConfig()),
		recent:   newRing(cfg.CacheEntries),
		awaiting: make(map[uint64]awaitRef),
		perp:     newPerpViews(),
		admitQ:   newQueue[admission](),
		settles:  new(settleQueue),
		inflight: new(atomic.Int64),
		// One group syncing and one being encoded, storeLagGroups waiting
		// for the store and one being stored, at most.
		toSync:     make(chan *writeGroup),
		toStore:    make(chan *writeGroup, storeLagGroups),
		freeGroups: newWriteGroups(storeLagGroups + 3),
		attestQ:    newQueue[*Entry](),
		claimWake:  make(chan struct{}, 1),
		quit:       make(chan struct{}),
	}
	n.rviews = newReadViews()
	n.entries = n.rviews.entries
	n.market = newMarketViews(n.ledger.Orderbook())
	n.market.idx.SetEquity(n.equity)
	for i := range cfg.Genesis {
		g := &cfg.Genesis[i]
		n.ledger.Genesis(g.Token, g.Account, &g.Amount)
	}
	for i := range cfg.Markets {
		if err := n.ledger.GenesisMarket(&cfg.Markets[i]); err != nil {
			return fmt.Errorf("genesis market %d: %w", i, err)
		}
		n.market.addMarket(&cfg.Markets[i])
	}
	n.market.idx.SyncPerp()
	n.genesisHash = n.ledger.StateHash()
	return nil
}

// startPipeline starts the node's goroutines over the state load built.
func (n *Node) startPipeline() {
	cfg := &n.cfg
	n.wg.Add(5)
	go n.writer()
	go n.syncer()
	go n.storer()
	go n.attester()
	go n.snapshotter()
	if !n.follow.on.Load() {
		n.startLeading()
	}
	if _, manual := cfg.Clock.(*ManualClock); !manual {
		n.wg.Add(1)
		go n.ticker()
	}
	if cfg.Retain > 0 {
		n.wg.Add(1)
		go n.pruner()
	}
	if cfg.TrimMappedEvery > 0 {
		n.wg.Add(1)
		go n.trimmer()
	}
	n.wg.Add(1)
	go n.valueLogCollector()
}

// startLeading starts what only a leader runs: the claimer (a follower
// stores the leader's claims).
func (n *Node) startLeading() {
	n.wg.Add(1)
	go n.claimer()
}

// restore rebuilds the state: from the newest usable snapshot, then the log
// after it. Replayed records the history already holds are not kept in RAM;
// the others (durable before the restart, not yet attested) are queued for
// attestation under the next sequence numbers, at the places they were
// applied in.
func (n *Node) restore() error {
	head, err := n.log.Head()
	if err != nil {
		return err
	}
	n.nextBatchSeq, n.attestedEnd = head.NextSeq, head.NextPlace
	n.ppView.lastAtt.Store(head.LastUs)
	last, err := n.checkNewestBatch(head)
	if err != nil {
		return err
	}
	var from uint64
	if !n.cfg.IgnoreSnapshots {
		if from, err = n.loadNewestSnapshot(head); err != nil {
			return err
		}
	}
	n.replayedFrom = from
	// The rows the store derives from inputs (tick links, published ticks,
	// withdrawal rows) are missing after derived when the node stopped
	// between an input's fdatasync and its group's store write: the replay
	// builds them again, as the live path did, and they are stored before
	// the node serves.
	derived, err := n.log.Derived()
	if err != nil {
		return err
	}
	if derived < from {
		return fmt.Errorf("the store holds a snapshot at input %d but derived rows only up to input %d: the data directory is damaged", from, derived)
	}
	var rebuilt persist.Group
	var bodies []byte // rebuilt's tick records
	var rest []*Entry
	err = n.log.Replay(from, func(seq uint64, in *core.Input) error {
		rec, rej := n.ledger.Apply(in)
		if !rej.OK() {
			return fmt.Errorf("intent log seq %d no longer applies (reject code %d): log and genesis disagree", seq, rej.Code)
		}
		n.clock.raise(in.TimeUs)
		if rec == nil {
			n.afterApply(in, nil, nil)
			return nil
		}
		n.ledger.Settle(rec)
		place := n.records
		n.records++
		var e *Entry
		if place < head.NextPlace {
			if last != nil && place >= last.FirstPlace && Commitment(rec).Leaf() != last.LeafHashes[place-last.FirstPlace] {
				return fmt.Errorf("attestation batch %d does not attest the log's record at place %d: the data directory is damaged", last.Seq, place)
			}
			n.finalize(rec)
		} else {
			e = &Entry{Rec: rec, place: place} // no acceptedAt: not live traffic
			n.entries.put(rec.Tx.Hash, e)
			rest = append(rest, e)
		}
		if seq <= derived {
			if e != nil {
				e.durable.Store(true)
			}
			n.afterApply(in, rec, e)
			return nil
		}
		// Not durable yet to afterApply: a tick builds its subscription
		// record and withdrawal rows, as live.
		if e == nil && in.Kind == core.InputTick {
			e = &Entry{Rec: rec, place: place}
		}
		addDerived(&rebuilt, &bodies, n.afterApply(in, rec, e), e)
		if e != nil {
			e.durable.Store(true)
			e.publish, e.withdrawals = nil, nil
		}
		return nil
	})
	if err != nil {
		return err
	}
	if rest, err = n.restoreSides(derived, rest, &rebuilt); err != nil {
		return err
	}
	n.follow.resume = n.ledger.Seq() + 1
	if len(rest) > 0 {
		n.follow.resume = rest[0].Rec.Seq // its batch is still to come
	}
	if derived < n.log.Len() || len(rebuilt.Batches) > 0 || len(rebuilt.Claims) > 0 {
		rebuilt.Through = n.log.Len()
		if err := n.log.Store(&rebuilt); err != nil {
			return fmt.Errorf("cannot store the rows derived from inputs %d to %d: %w", derived+1, rebuilt.Through, err)
		}
		n.Logf("stored again what inputs %d to %d derive and %d signed batches (stopped between their log write and their store write)",
			derived+1, rebuilt.Through, len(rebuilt.Batches))
	}
	if n.records < head.NextPlace {
		return fmt.Errorf("the history holds %d attested records, the log only %d: the data directory is damaged", head.NextPlace, n.records)
	}
	n.resumeOffset() // evm_increaseTime's offset, from the log or the snapshot

	// The node's time resumes at the newest it had given out, even if the
	// source now reads earlier (a restart after the clock stepped back).
	n.clock.raise(max(n.ppView.lastAtt.Load(), n.lastTickUs))
	for _, e := range rest {
		n.inflight.Add(1)
		n.ppView.pending.Add(1)
		n.attestQ.push(e)
	}
	return nil
}

// restoreSides adds to rebuilt what the committee signed after derived that
// the store does not hold (the log's side records): the claims, and the
// batches after the newest stored one, which attest the oldest of rest,
// the replayed records not attested in the store. It attaches those
// records to their batches and returns the rest.
func (n *Node) restoreSides(derived uint64, rest []*Entry, rebuilt *persist.Group) ([]*Entry, error) {
	sides, err := n.log.Sides(derived + 1)
	if err != nil {
		return nil, err
	}
	rebuilt.Claims = append(rebuilt.Claims, sides.Claims...)
	var leaves [][32]byte
	for _, sb := range sides.Batches {
		if sb.Seq < n.nextBatchSeq {
			continue // stored
		}
		if int(sb.Leaves) > len(rest) {
			return nil, fmt.Errorf("the log's attestation batch %d attests records the log does not hold (places %d to %d): the data directory is damaged",
				sb.Seq, sb.FirstPlace, sb.FirstPlace+uint64(sb.Leaves)-1)
		}
		group := rest[:sb.Leaves]
		b, err := restoreSigned(sb, n.nextBatchSeq, n.attestedEnd, group, &leaves)
		if errors.Is(err, errNotItsRecords) {
			return nil, fmt.Errorf("the log's attestation batch %d does not attest its records (places %d to %d): the data directory is damaged",
				sb.Seq, sb.FirstPlace, sb.FirstPlace+uint64(sb.Leaves)-1)
		}
		if err != nil {
			return nil, fmt.Errorf("the log's attestation batch %d: %w", sb.Seq, err)
		}
		sb.Records = recordsOf(group)
		rebuilt.Batches = append(rebuilt.Batches, sb)
		n.attach(group, b)
		n.nextBatchSeq++
		n.ppView.lastAtt.Store(sb.TimeUs)
		rest = rest[sb.Leaves:]
	}
	return rest, nil
}

// errNotItsRecords: a batch signed elsewhere is not the next batch over
// the records it is checked against.
var errNotItsRecords = errors.New("the batch does not attest these records")

// restoreSigned rebuilds sb, a batch the committee signed elsewhere (a
// side record of the log, the leader's), after checking that it is batch
// seq over exactly group's records, the first of them at place first
// (errNotItsRecords otherwise). leaves is scratch.
func restoreSigned(sb *persist.Batch, seq, first uint64, group []*Entry, leaves *[][32]byte) (*attest.Batch, error) {
	*leaves = appendLeaves((*leaves)[:0], group)
	if sb.Seq != seq || sb.FirstPlace != first || !slices.Equal(*leaves, sb.LeafHashes) {
		return nil, errNotItsRecords
	}
	return attest.Restore(sb.Epoch, sb.Seq, sb.TimeUs, sb.Root, sb.LeafHashes, sb.Sigs)
}

// checkNewestBatch rebuilds the newest stored batch from its leaves: a
// batch whose leaves do not hash to its signed root means the data
// directory is damaged, and Open refuses it rather than sign over it. It
// returns the batch (nil when none is stored) so that the replay can check
// the records it attests.
func (n *Node) checkNewestBatch(head persist.Head) (*persist.Batch, error) {
	if head.NextSeq == 1 {
		return nil, nil
	}
	sb, _, err := readBatch(n.log, head.NextSeq-1)
	if err != nil {
		return nil, fmt.Errorf("%w: the data directory is damaged", err)
	}
	return sb, nil
}

// Close stops accepting writes, drains the pipeline and closes the log.
// Later calls return the first call's result.
func (n *Node) Close() error { return n.close("") }

// CloseDumping is Close that, once the pipeline is drained, writes the
// final state to the file path (--dump-state: revert.go) and logs its
// sequence and hash. The log is closed either way; the error says what
// failed.
func (n *Node) CloseDumping(path string) error { return n.close(path) }

func (n *Node) close(dump string) error {
	n.closeOnce.Do(func() {
		n.evm.mu.Lock()
		defer n.evm.mu.Unlock()
		n.dropEvmSnapshots()
		n.mu.Lock()
		n.stop(ErrStopped)
		n.mu.Unlock()
		n.stopPipeline()
		var dumpErr error
		if dump != "" {
			if dumpErr = n.dumpFile(dump, false); dumpErr == nil {
				seq, h := n.StateAt()
				n.Logf("state written to %s: %d inputs, state hash %x", dump, seq, h)
			}
		}
		n.closeErr = errors.Join(dumpErr, n.log.Close())
	})
	return n.closeErr
}

// stopPipeline stops the pipeline's goroutines; the inputs already
// admitted are made durable first.
// REQUIRES: n.evm.mu held, writes refused (stopErr set).
func (n *Node) stopPipeline() {
	close(n.quit)
	n.admitQ.close()
	n.wg.Wait()
}

// submit applies in under the sequencer lock and queues it for the log. done
// runs on the writer once the input is durable (or with the error that
// prevented it).
func (n *Node) submit(in *core.Input, done func(*Entry, error)) (core.Reject, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.submitLocked(in, done)
}

// While a tick's books clear (n.ticking), a transaction is admitted
// staged if it can be (core.RejectWaitTick says it cannot); it and any
// other input otherwise wait for the tick's end, with mu released.
// REQUIRES: n.mu held for writing.
func (n *Node) submitLocked(in *core.Input, done func(*Entry, error)) (core.Reject, error) {
	for n.ticking && in.Kind != core.InputTx {
		n.tickDone.Wait()
	}
	if n.stopErr != nil {
		return core.Reject{}, n.stopErr
	}
	if n.follow.on.Load() {
		return core.Reject{}, n.notLeader()
	}
	if in.Kind != core.InputTick && n.inflight.Load() >= MaxInflight { // runTick checked a tick's before it began
		return core.Reject{}, ErrOverloaded
	}
	if in.Kind == core.InputDeposit {
		if in.DepositID == (core.Hash{}) {
			in.DepositID = depositID(n.ledger.Seq()+1, in.Token, in.To, &in.Amount)
		}
		if dup, err := n.knownHash(in.DepositID); err != nil || dup {
			if err == nil {
				err = ErrDuplicateDeposit
			}
			return core.Reject{}, err
		}
	}
	n.settles.settle(n.ledger)
	n.ppView.pending.Add(1) // before the stamp: PastPerfectTime
	if in.Kind == core.InputTx {
		in.TimeUs = n.clock.NowMicros()
		in.Staged = n.clearing // in a downstream window the ledger stages it, logged as ordinary
	}
	if in.Kind == core.InputTick && n.cfg.DuringTick != nil {
		n.cfg.DuringTick()
	}
	rec, rej := n.ledger.Apply(in)
	if rej.Code == core.RejectWaitTick {
		n.ppView.pending.Add(-1)
		for n.ticking {
			n.tickDone.Wait()
		}
		in.Staged = false
		return n.submitLocked(in, done) // stamped again: admitted now
	}
	if !rej.OK() {
		n.ppView.pending.Add(-1)
		if rej.Code == core.RejectEquivocation {
			return n.equivocated(in.Tx.From, rej.Target)
		}
		return rej, nil
	}
	n.queueApplied(in, rec, time.Now(), done)
	return rej, nil
}

// queueApplied keeps the node's views in step with an input the ledger
// just applied (rec its record, nil if none) and queues it for the log;
// acceptedAt is a live input's admission time (zero: not live traffic).
// REQUIRES: n.mu held for writing, pending raised for in.
func (n *Node) queueApplied(in *core.Input, rec *core.TxRecord, acceptedAt time.Time, done func(*Entry, error)) {
	var e *Entry
	if rec != nil {
		e = &Entry{Rec: rec, place: n.records, acceptedAt: acceptedAt}
		n.records++
		n.entries.put(rec.Tx.Hash, e)
		n.inflight.Add(1)
	} else {
		n.ppView.pending.Add(-1)
	}
	links := n.afterApply(in, rec, e)
	n.admitQ.push(admission{in: in, entry: e, links: links, done: done})
	n.snap.afterInput()
}

// SubmitTx applies a signed transaction. On acceptance done runs once it is
// durable; the returned Reject says why it was refused otherwise.
// The committee's faults may refuse it first (ErrBlacklisted,
// *RejectedError).
func (n *Node) SubmitTx(tx *core.Tx, done func(*Entry, error)) (core.Reject, error) {
	return n.SubmitTxVotes(tx, nil, done)
}

// Deposit credits a deposit observed on the bridged chain; a zero id derives
// one from the ledger position. done runs once it is durable.
func (n *Node) Deposit(id core.Hash, token, to core.Address, amount *uint256.Int, done func(*Entry, error)) error {
	_, err := n.submit(&core.Input{Kind: core.InputDeposit, DepositID: id, Token: token, To: to, Amount: *amount}, done)
	return err
}

// SetBaseFee changes the base fee; done runs once the change is durable.
func (n *Node) SetBaseFee(fee *uint256.Int, done func(error)) error {
	_, err := n.submit(&core.Input{Kind: core.InputSetBaseFee, BaseFee: *fee}, func(_ *Entry, err error) { done(err) })
	return err
}

// knownHash reports whether a record with hash h was applied: in RAM or in
// the history on disk (a point read: deposits are rare next to transfers).
// REQUIRES: n.mu held.
func (n *Node) knownHash(h core.Hash) (bool, error) {
	if n.entries.get(h) != nil {
		return true, nil
	}
	ok, err := n.log.HasHash(h)
	if err != nil {
		return false, fmt.Errorf("cannot check the deposit id against the history: %w", err)
	}
	return ok, nil
}

func depositID(seq uint64, token, to core.Address, amount *uint256.Int) core.Hash {
	var s [8]byte
	for i := range s {
		s[i] = byte(seq >> (56 - 8*i))
	}
	a := amount.Bytes32()
	return core.Keccak256Hash([]byte("ledgerd deposit"), s[:], token[:], to[:], a[:])
}
