package node

import (
	"errors"
	"fmt"
	"sync"
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

// Config configures a node.
type Config struct {
	DataDir       string
	ChainID       uint64
	BaseFee       uint256.Int
	Validators    int
	CommitteeSeed []byte
	Clock         Clock
	Genesis       []Alloc
	// Markets are created at genesis, before the log is replayed.
	Markets []clob.MarketConfig
	// Orderbook bounds the engine's memory per market.
	Orderbook clob.Limits
	// BeforeAppend, when set, runs on the writer before each group commit.
	// Tests use it to hold inputs in the applied-but-not-durable state, and
	// to fail a group commit as a failing disk would: an error it returns
	// is the commit's.
	BeforeAppend func() error
	// Logf reports fatal pipeline errors; nil discards them.
	Logf func(format string, args ...any)
}

// Node is the running ledger service. Its methods are safe for concurrent use.
type Node struct {
	cfg       Config
	committee *attest.Committee
	log       *persist.Log

	mu      sync.RWMutex
	ledger  *core.Ledger
	entries map[core.Hash]*Entry
	logs    []LogRef // attested logs, in attestation order
	// attested lists the attested records in attestation order (batch,
	// then leaf): a record's index here is its place in the history
	// listings, stable across restarts because batches are restored.
	attested []*Entry
	inflight int // inputs applied but not yet attested
	// stopErr, once set, refuses every write: ErrStopped or ErrLogFailed.
	stopErr error
	lastAtt int64 // timestamp of the newest attestation batch
	metrics metrics
	// lastStamp is the newest admission time given to an input: the
	// sequencer's clock never runs backwards.
	lastStamp int64
	// awaiting maps the Seq of each admitted orderbook transaction to its
	// entry until the tick it lands in has run.
	awaiting map[uint64]*Entry
	market   *marketViews
	// pub receives durable ticks and attested receipts (nil: nobody
	// subscribes); lastTickHash chains the published ticks.
	pub          Publisher
	lastTickHash clob.Hash
	lastTickUs   int64
	// nextBatchSeq is the sequence number of the next attestation batch:
	// one after the newest stored batch, so none is ever signed twice.
	nextBatchSeq uint64

	admitQ    *queue[admission]
	attestQ   *queue[*Entry]
	quit      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// admission is an applied input on its way to the log, or (in nil) an
// attestation batch to store with the next group commit.
type admission struct {
	in    *core.Input
	entry *Entry // nil for inputs without a record (base-fee changes)
	batch *persist.Batch
	done  func(*Entry, error)
}

// Open replays the log in cfg.DataDir and starts the pipeline.
func Open(cfg Config) (*Node, error) {
	if cfg.Validators < 1 || cfg.Validators > attest.MaxCommitteeSize {
		return nil, fmt.Errorf("committee size must be 1..%d, got %d", attest.MaxCommitteeSize, cfg.Validators)
	}
	if cfg.Clock == nil {
		cfg.Clock = WallClock{}
	}
	if cfg.Orderbook.OrdersMax == 0 {
		cfg.Orderbook.OrdersMax = DefaultOrdersMax
	}
	if cfg.Orderbook.PendingMax == 0 {
		cfg.Orderbook.PendingMax = DefaultPendingMax
	}
	lg, err := persist.Open(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg:       cfg,
		committee: attest.NewCommittee(cfg.CommitteeSeed, cfg.Validators, 0),
		log:       lg,
		ledger:    core.NewLedger(core.Config{ChainID: cfg.ChainID, BaseFee: cfg.BaseFee, Orderbook: cfg.Orderbook}),
		entries:   make(map[core.Hash]*Entry),
		awaiting:  make(map[uint64]*Entry),
		admitQ:    newQueue[admission](),
		attestQ:   newQueue[*Entry](),
		quit:      make(chan struct{}),
	}
	n.market = newMarketViews(n.ledger.Orderbook())
	for i := range cfg.Genesis {
		g := &cfg.Genesis[i]
		n.ledger.Genesis(g.Token, g.Account, &g.Amount)
	}
	for i := range cfg.Markets {
		if err := n.ledger.GenesisMarket(&cfg.Markets[i]); err != nil {
			lg.Close()
			return nil, fmt.Errorf("genesis market %d: %w", i, err)
		}
		n.market.addMarket(&cfg.Markets[i])
	}
	if err := n.replay(); err != nil {
		lg.Close()
		return nil, err
	}
	n.wg.Add(2)
	go n.writer()
	go n.attester()
	if _, manual := cfg.Clock.(*ManualClock); !manual {
		n.wg.Add(1)
		go n.ticker()
	}
	return n, nil
}

// replay rebuilds the ledger and the index from the log; the replayed
// records are queued for attestation.
func (n *Node) replay() error {
	var records []*Entry // in log order: the order they were attested in
	err := n.log.Replay(func(seq uint64, in *core.Input) error {
		rec, rej := n.ledger.Apply(in)
		if !rej.OK() {
			return fmt.Errorf("intent log seq %d no longer applies (reject code %d): log and genesis disagree", seq, rej.Code)
		}
		n.lastStamp = max(n.lastStamp, in.TimeUs)
		if rec == nil {
			n.afterApply(in, nil)
			return nil
		}
		n.ledger.Settle(rec)
		e := &Entry{Rec: rec, durable: true, acceptedAt: time.Now()}
		n.entries[rec.Tx.Hash] = e
		n.afterApply(in, e)
		records = append(records, e)
		return nil
	})
	if err != nil {
		return err
	}
	rest, err := n.restoreBatches(records)
	if err != nil {
		return err
	}
	// Records made durable but not attested before the restart are
	// attested now, under the next sequence numbers.
	for _, e := range rest {
		n.inflight++
		n.attestQ.push(e)
	}
	return nil
}

// restoreBatches gives the replayed records, in log order, the attestation
// batches stored for them, rebuilt without signing, and returns the records
// no stored batch covers. A stored batch whose records do not hash to its
// root, or that covers more records than the log holds, means the data
// directory is damaged: Open refuses it rather than sign over it.
func (n *Node) restoreBatches(records []*Entry) ([]*Entry, error) {
	n.nextBatchSeq = 1
	var leaves [][32]byte
	err := n.log.Batches(func(sb *persist.Batch) error {
		if int(sb.Leaves) > len(records) {
			return fmt.Errorf("attestation batch %d covers %d records, the log holds %d more: the data directory is damaged", sb.Seq, sb.Leaves, len(records))
		}
		group := records[:sb.Leaves]
		records = records[sb.Leaves:]
		leaves = appendLeaves(leaves[:0], group)
		b, err := attest.Restore(sb.Epoch, sb.Seq, sb.TimeUs, sb.Root, leaves, sb.Sigs)
		if err != nil {
			return fmt.Errorf("attestation batch %d: %w: the data directory is damaged", sb.Seq, err)
		}
		n.attachLocked(group, b)
		n.lastAtt = b.Timestamp
		n.nextBatchSeq = sb.Seq + 1
		return nil
	})
	return records, err
}

// Close stops accepting writes, drains the pipeline and closes the log.
// Later calls return the first call's result.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.mu.Lock()
		n.stop(ErrStopped)
		n.mu.Unlock()
		close(n.quit)
		n.admitQ.close()
		n.wg.Wait()
		n.closeErr = n.log.Close()
	})
	return n.closeErr
}

// submit applies in under the sequencer lock and queues it for the log. done
// runs on the writer once the input is durable (or with the error that
// prevented it).
func (n *Node) submit(in *core.Input, done func(*Entry, error)) (core.Reject, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.submitLocked(in, done)
}

// REQUIRES: n.mu held.
func (n *Node) submitLocked(in *core.Input, done func(*Entry, error)) (core.Reject, error) {
	if n.stopErr != nil {
		return core.Reject{}, n.stopErr
	}
	if n.inflight >= MaxInflight {
		return core.Reject{}, ErrOverloaded
	}
	if in.Kind == core.InputDeposit {
		if in.DepositID == (core.Hash{}) {
			in.DepositID = depositID(n.ledger.Seq()+1, in.Token, in.To, &in.Amount)
		}
		if n.entries[in.DepositID] != nil {
			return core.Reject{}, ErrDuplicateDeposit
		}
	}
	if in.Kind == core.InputTx {
		n.lastStamp = max(n.lastStamp, n.cfg.Clock.NowMicros())
		in.TimeUs = n.lastStamp
	}
	rec, rej := n.ledger.Apply(in)
	if !rej.OK() {
		return rej, nil
	}
	var e *Entry
	if rec != nil {
		e = &Entry{Rec: rec, acceptedAt: time.Now()}
		n.entries[rec.Tx.Hash] = e
		n.inflight++
	}
	n.afterApply(in, e)
	n.admitQ.push(admission{in: in, entry: e, done: done})
	return rej, nil
}

// SubmitTx applies a signed transaction. On acceptance done runs once it is
// durable; the returned Reject says why it was refused otherwise.
func (n *Node) SubmitTx(tx *core.Tx, done func(*Entry, error)) (core.Reject, error) {
	return n.submit(&core.Input{Kind: core.InputTx, Tx: *tx}, done)
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

func depositID(seq uint64, token, to core.Address, amount *uint256.Int) core.Hash {
	var s [8]byte
	for i := range s {
		s[i] = byte(seq >> (56 - 8*i))
	}
	a := amount.Bytes32()
	return core.Keccak256Hash([]byte("ledgerd deposit"), s[:], token[:], to[:], a[:])
}
