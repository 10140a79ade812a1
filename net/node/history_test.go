package node

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/persist"
)

// receiptView is what a client sees of a receipt: comparable across reads
// from RAM and from disk.
type receiptView struct {
	rec                string
	digest             [32]byte
	index, proofLen    int
	proof0             [32]byte
	inTick             bool
	tickUs             int64
	tickHash, blockSig core.Hash
}

func viewOf(r Receipt) receiptView {
	p := r.Batch.Proof(r.Index)
	v := receiptView{rec: fmt.Sprintf("%+v", *r.Rec), digest: r.Batch.Digest, index: r.Index, proofLen: len(p.Path),
		inTick: r.InTick, tickUs: r.TickUs, tickHash: r.TickHash}
	if len(p.Path) > 0 {
		v.proof0 = p.Path[0]
	}
	copy(v.blockSig[:], r.Batch.Sigs[0].Signature[:32])
	return v
}

// crossingOrders submits round's four crossing orders on the first dev
// market, from dev accounts 0-3, through submit, and appends their hashes
// to dst.
func crossingOrders(dst []core.Hash, clock *ManualClock, round int, nonces map[int]uint64, submit func(*core.Tx)) []core.Hash {
	book := DevMarkets()[0].ID
	deadline := uint64((clock.NowMicros()/500_000 + 1) * 500_000)
	for i := range 4 {
		side := clob.Side(i % 2)
		tx := obTx(i, nonces[i], submitOrder(book, side, 3+uint64(i), 200_000-uint64(side)*100+uint64(round)*10, deadline))
		nonces[i]++
		submit(tx)
		dst = append(dst, tx.Hash)
	}
	return dst
}

// workload drives rounds of crossing orders from dev accounts 0-3,
// transfers from account 4 and deposits, with a tick after each round's
// orders; mid, when set, runs in the middle of round midRound, between the
// orders and their tick. It returns every record's hash in submission order.
func workload(t *testing.T, n *Node, clock *ManualClock, rounds, midRound int, nonces map[int]uint64, mid func()) []core.Hash {
	t.Helper()
	var hashes []core.Hash
	for round := range rounds {
		hashes = crossingOrders(hashes, clock, round, nonces, func(tx *core.Tx) { submitWait(t, n, tx) })
		tx := devTransfer(nonces[4], uint64(round)+1)
		tx.From, tx.Hash = DevAddress(4), core.Hash{byte(round), 0xcc, byte(nonces[4])}
		nonces[4]++
		submitWait(t, n, tx)
		hashes = append(hashes, tx.Hash)
		done := make(chan error, 1)
		id := core.Hash{0xde, byte(nonces[4])} // unique: the transfer's nonce moved on
		if err := n.Deposit(id, core.NativeToken, DevAddress(5), uint256.NewInt(7), func(_ *Entry, err error) { done <- err }); err != nil || <-done != nil {
			t.Fatalf("deposit: %v", err)
		}
		hashes = append(hashes, id)
		if round == midRound && mid != nil {
			mid()
		}
		clock.Advance(500_000)
		durable, err := n.RunDueTicks()
		if err != nil || durable == nil {
			t.Fatalf("round %d: tick %v %v", round, durable, err)
		}
		if err := <-durable; err != nil {
			t.Fatal(err)
		}
	}
	return hashes
}

// waitAllAttested waits until nothing is in flight.
func waitAllAttested(t *testing.T, n *Node) {
	t.Helper()
	for range 5000 {
		inflight := n.inflight.Load()
		if inflight == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("records still in flight")
}

// TestHistoryReadsFromDisk: with a cache of 4 records, receipts, listings
// and logs of older records come from disk and equal what RAM served.
func TestHistoryReadsFromDisk(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Markets, cfg.CacheEntries = DevMarkets(), 4
	n := openNode(t, cfg)
	defer n.Close()
	clock := cfg.Clock.(*ManualClock)
	hashes := workload(t, n, clock, 6, -1, map[int]uint64{}, nil)
	waitAllAttested(t, n)
	// Every tick is a record too: read them all back from the listing.
	items, next, err := n.ListReceipts(&ListQuery{After: -1, Limit: ListLimitMax})
	if err != nil || next != -1 {
		t.Fatalf("list: %v, next %d", err, next)
	}
	if len(items) != len(hashes)+6 {
		t.Fatalf("listed %d records, want %d transactions and 6 ticks", len(items), len(hashes))
	}
	n.mu.RLock()
	held := n.entries.len()
	n.mu.RUnlock()
	if held > cfg.CacheEntries {
		t.Fatalf("%d entries in RAM, the cache holds %d", held, cfg.CacheEntries)
	}
	fromDisk := 0
	for i, it := range items {
		r, ok := n.Lookup(it.Rec.Tx.Hash)
		if !ok || viewOf(r) != viewOf(it) {
			t.Fatalf("record %d: lookup %v\n%+v\nlisting\n%+v", i, ok, viewOf(r), viewOf(it))
		}
		if n.recent.at(uint64(i)) == nil {
			fromDisk++
		}
		if it.Rec.Kind == core.RecordTx && it.Rec.Tx.To == core.OrderbookAddress && !r.InTick {
			t.Fatalf("order %x read from disk lost its tick", it.Rec.Tx.Hash[:4])
		}
	}
	if fromDisk < len(items)-cfg.CacheEntries {
		t.Fatalf("only %d of %d records came from disk", fromDisk, len(items))
	}
	// Pages of 3, both ways, one account: every record once, in order.
	for _, newest := range []bool{false, true} {
		var walked []core.Hash
		q := ListQuery{After: -1, Limit: 3, NewestFirst: newest, Account: ptr(DevAddress(4))}
		for {
			page, next, err := n.ListReceipts(&q)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page {
				walked = append(walked, r.Rec.Tx.Hash)
			}
			if next < 0 {
				break
			}
			q.After = next
		}
		if len(walked) != 6 {
			t.Fatalf("newest first %v: account 4 listed %d records, sent 6", newest, len(walked))
		}
		for k := 1; k < len(walked); k++ {
			a, _ := n.Lookup(walked[k-1])
			b, _ := n.Lookup(walked[k])
			if (a.Batch.Timestamp > b.Batch.Timestamp) != newest && a.Batch.Timestamp != b.Batch.Timestamp {
				t.Fatalf("newest first %v: out of order at %d", newest, k)
			}
		}
	}
	logs, err := n.Logs(&LogFilter{Topics: [][]core.Hash{{core.DepositTopic()}}}, 100, nil)
	if err != nil || len(logs) != 6 {
		t.Fatalf("deposit logs: %d, %v", len(logs), err)
	}
	// Deposits can share a batch, so count the ones at or after the
	// fourth's batch time rather than assume three.
	from := logs[3].Receipt.Batch.Timestamp
	want := 0
	for _, l := range logs {
		if l.Receipt.Batch.Timestamp >= from {
			want++
		}
	}
	logs, err = n.Logs(&LogFilter{Topics: [][]core.Hash{{core.DepositTopic()}}, FromUs: from}, 100, nil)
	if err != nil || len(logs) != want || want < 3 {
		t.Fatalf("deposit logs from the fourth one's time: %d (want %d), %v", len(logs), want, err)
	}
	// The calls of one request share a budget: each takes what it looked
	// at, and a call that would look past what is left is refused.
	all := &LogFilter{Topics: [][]core.Hash{{core.DepositTopic()}}}
	budget := 1000
	if logs, err := n.Logs(all, 100, &budget); err != nil || len(logs) != 6 || budget > 1000-6 {
		t.Fatalf("with a budget: %d logs, %v, %d left", len(logs), err, budget)
	}
	scanned := 1000 - budget
	budget = scanned - 1
	if _, err := n.Logs(all, 100, &budget); !errors.Is(err, ErrLogRangeTooWide) || budget != 0 {
		t.Fatalf("one log short of the budget: %v, %d left; want ErrLogRangeTooWide and none", err, budget)
	}
	// A range holding more logs than one query looks at is refused, not cut.
	n.logScanMax = 5
	if logs, err := n.Logs(&LogFilter{Topics: [][]core.Hash{{core.DepositTopic()}}}, 100, nil); !errors.Is(err, ErrLogRangeTooWide) {
		t.Fatalf("a range over the scan bound: %d logs, %v; want ErrLogRangeTooWide", len(logs), err)
	}
}

func ptr[T any](v T) *T { return &v }

// marketState renders what ob_ queries and the books answer, to compare a
// node restored from a snapshot with one replayed from genesis.
func (n *Node) marketState() string {
	var out strings.Builder
	n.ReadIndex(func(x *marketdata.Index) {
		out.Write(obwire.AppendMarkets(nil, x.Markets(nil)))
		for i := range 6 {
			page := x.Orders(nil, clob.Address(DevAddress(i)), &marketdata.OrdersQuery{Limit: 100})
			out.Write(obwire.AppendOrders(nil, &page))
		}
	})
	for _, m := range DevMarkets() {
		out.WriteString(n.levels(m.ID))
	}
	return out.String()
}

// TestSnapshotRestart: a restart loads the snapshot and replays only the log
// after it, to the same state as a replay from genesis; a damaged newest
// snapshot is skipped for the older one with a log line.
func TestSnapshotRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Markets, cfg.SnapshotEvery, cfg.CacheEntries = DevMarkets(), -1, 8
	var logMu sync.Mutex
	var logged []string
	cfg.Logf = func(format string, args ...any) {
		logMu.Lock()
		logged = append(logged, fmt.Sprintf(format, args...))
		logMu.Unlock()
	}
	clock := cfg.Clock.(*ManualClock)
	n := openNode(t, cfg)
	nonces := map[int]uint64{}
	snap := func() {
		if err := n.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	// The first snapshot falls between orders and their tick: the restored
	// node must still link them to it.
	hashes := workload(t, n, clock, 4, 2, nonces, snap)
	snap()
	hashes = append(hashes, workload(t, n, clock, 2, -1, nonces, nil)...)
	waitAllAttested(t, n)
	wantHash, wantMarkets := n.StateHash(), n.marketState()
	want := map[core.Hash]receiptView{}
	for _, h := range hashes {
		r, _ := n.Lookup(h)
		want[h] = viewOf(r)
	}
	if st := n.SnapshotStats(); st.Taken != 2 || st.RawBytes == 0 || st.DiskBytes == 0 {
		t.Fatalf("snapshot stats %+v", st)
	}
	logLen, nowUs := n.log.Len(), clock.NowMicros()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	copyDir := func() string {
		d := t.TempDir()
		if err := os.CopyFS(d, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		return d
	}
	var snaps []uint64
	withLog := func(d string, fn func(lg *persist.Log)) {
		lg, err := persist.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		defer lg.Close()
		fn(lg)
	}
	withLog(dir, func(lg *persist.Log) {
		lg.Snapshots(func(seq uint64, _ []byte, err error) bool { snaps = append(snaps, seq); return true })
	})
	if len(snaps) != 2 || snaps[0] >= logLen {
		t.Fatalf("snapshots at %v, log length %d", snaps, logLen)
	}
	genesisDir := copyDir()
	withLog(genesisDir, func(lg *persist.Log) { lg.DeleteSnapshotsBefore(^uint64(0)) })
	damagedDir := copyDir()
	withLog(damagedDir, func(lg *persist.Log) { lg.DamageSnapshotForTest(snaps[0]) })

	// Each path restores the same state and serves the same receipts, and
	// one more round then gives the same state on every path.
	var after []core.Hash
	for _, c := range []struct {
		label string
		dir   string
		from  uint64
	}{{"newest snapshot", dir, snaps[0]}, {"from genesis", genesisDir, 0}, {"damaged newest snapshot", damagedDir, snaps[1]}} {
		cfg := cfg
		cfg.DataDir, cfg.Clock = c.dir, NewManualClock(nowUs)
		n := openNode(t, cfg)
		if n.replayedFrom != c.from {
			t.Fatalf("%s: replayed from seq %d, want %d", c.label, n.replayedFrom, c.from)
		}
		if got := n.StateHash(); got != wantHash {
			t.Fatalf("%s: state hash %x, want %x", c.label, got, wantHash)
		}
		if got := n.marketState(); got != wantMarkets {
			t.Fatalf("%s: markets\n%s\nwant\n%s", c.label, got, wantMarkets)
		}
		for _, h := range hashes {
			if r, ok := n.Lookup(h); !ok || viewOf(r) != want[h] {
				t.Fatalf("%s: receipt %x differs after the restart", c.label, h[:4])
			}
		}
		workload(t, n, cfg.Clock.(*ManualClock), 1, -1, copyNonces(nonces), nil)
		waitAllAttested(t, n)
		after = append(after, n.StateHash())
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if after[0] != after[1] || after[1] != after[2] {
		t.Fatalf("after one more round the paths differ: %x", after)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(strings.Join(logged, "\n"), fmt.Sprintf("snapshot at seq %d skipped", snaps[0])) {
		t.Fatalf("no log line for the damaged snapshot: %q", logged)
	}
}

func copyNonces(m map[int]uint64) map[int]uint64 {
	c := make(map[int]uint64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestRetentionPrunes: history attested before the cutoff answers as
// unknown, later history and the sequence numbers are untouched, and the
// node restarts over the cut log from its snapshot.
func TestRetentionPrunes(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Markets, cfg.SnapshotEvery, cfg.CacheEntries = DevMarkets(), -1, 2
	clock := cfg.Clock.(*ManualClock)
	n := openNode(t, cfg)
	nonces := map[int]uint64{}
	old := workload(t, n, clock, 2, -1, nonces, nil)
	waitAllAttested(t, n)
	cutoff := clock.NowMicros() + 1
	clock.Advance(1_000_000)
	kept := workload(t, n, clock, 2, -1, nonces, nil)
	waitAllAttested(t, n)
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := n.prune(cutoff); err != nil {
		t.Fatal(err)
	}
	check := func(n *Node) {
		t.Helper()
		for _, h := range old {
			if _, ok := n.Lookup(h); ok {
				t.Fatalf("pruned record %x still answers", h[:4])
			}
		}
		for _, h := range kept {
			if _, ok := n.Lookup(h); !ok {
				t.Fatalf("kept record %x lost", h[:4])
			}
		}
		items, _, err := n.ListReceipts(&ListQuery{After: -1, Limit: ListLimitMax})
		if err != nil || len(items) != len(kept)+2 { // and 2 ticks
			t.Fatalf("listing after pruning: %d items, %v; want %d", len(items), err, len(kept)+2)
		}
		logs, err := n.Logs(&LogFilter{Topics: [][]core.Hash{{core.DepositTopic()}}}, 100, nil)
		if err != nil || len(logs) != 2 {
			t.Fatalf("deposit logs after pruning: %d, %v", len(logs), err)
		}
	}
	check(n)
	head, err := n.log.Head()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = openNode(t, cfg)
	defer n.Close()
	check(n)
	tx := devTransfer(nonces[0], 1)
	submitWait(t, n, tx)
	if b := attestedBatch(t, n, tx.Hash); b.seq != head.NextSeq {
		t.Fatalf("first batch after pruning and a restart has seq %d, want %d", b.seq, head.NextSeq)
	}
}
