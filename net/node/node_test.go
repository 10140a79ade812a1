package node

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
	"github.com/ledgervenue/node/persist"
)

func testConfig(t testing.TB, dir string) Config {
	t.Helper()
	return Config{DataDir: dir, ChainID: 0x50d, BaseFee: *uint256.NewInt(1e9), Validators: 4,
		CommitteeSeed: []byte("test"), Clock: NewManualClock(1_000_000), Genesis: DevGenesis()}
}

func openNode(t testing.TB, cfg Config) *Node {
	t.Helper()
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func devTransfer(nonce uint64, value uint64) *core.Tx {
	return &core.Tx{Hash: core.Hash{byte(nonce + 1), 0xab}, Type: core.TxTypeDynamicFee, ChainID: 0x50d, Nonce: nonce,
		From: DevAddress(0), To: DevAddress(1), HasTo: true, Value: *uint256.NewInt(value), Gas: core.TxGas,
		GasFeeCap: *uint256.NewInt(2e9)}
}

// submitWait submits tx and waits until it is attested.
func submitWait(t *testing.T, n *Node, tx *core.Tx) {
	t.Helper()
	select {
	case <-submitDurable(t, n, tx):
	case <-time.After(5 * time.Second):
		t.Fatal("not attested")
	}
}

// submitDurable submits tx, waits until it is durable, and returns a
// channel closed once it is attested.
func submitDurable(t *testing.T, n *Node, tx *core.Tx) <-chan struct{} {
	t.Helper()
	durable := make(chan error, 1)
	rej, err := n.SubmitTx(tx, func(_ *Entry, err error) { durable <- err })
	if err != nil || !rej.OK() {
		t.Fatalf("submit: %v %+v", err, rej)
	}
	if err := <-durable; err != nil {
		t.Fatal(err)
	}
	attested := make(chan struct{})
	n.OnAttested(tx.Hash, func() { close(attested) })
	return attested
}

func TestSubmitAttestVerify(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir()))
	defer n.Close()
	tx := devTransfer(0, 5)
	submitWait(t, n, tx)
	r, ok := n.Lookup(tx.Hash)
	if !ok || !r.Attested {
		t.Fatalf("lookup %v %+v", ok, r)
	}
	info := n.Committee()
	leaf := Commitment(r.Rec).Leaf()
	atts := r.Batch.Attestations(r.Index)
	if err := attest.Verify(info, leaf, r.Batch.Proof(r.Index), r.Batch.Root, atts); err != nil {
		t.Fatalf("verify: %v", err)
	}
	tampered := *r.Rec
	tampered.GasUsed++
	if attest.Verify(info, Commitment(&tampered).Leaf(), r.Batch.Proof(r.Index), r.Batch.Root, atts) == nil {
		t.Fatal("tampered receipt verified")
	}
	if got := n.Balance(core.NativeToken, DevAddress(1)).Cash; !got.Eq(new(uint256.Int).Add(DevBalanceWei, uint256.NewInt(5))) {
		t.Fatalf("recipient balance %s", got.Dec())
	}
}

// TestPendingUntilDurable holds the writer so the first transaction stays
// applied but not durable: the sender's next transaction must be refused
// as pending, and accepted once the first is durable.
func TestPendingUntilDurable(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	gate := make(chan struct{})
	cfg.BeforeAppend = func() error { <-gate; return nil }
	n := openNode(t, cfg)
	defer n.Close()
	durable := make(chan error, 1)
	if rej, err := n.SubmitTx(devTransfer(0, 1), func(_ *Entry, err error) { durable <- err }); err != nil || !rej.OK() {
		t.Fatalf("first: %v %+v", err, rej)
	}
	if _, ok := n.Lookup(devTransfer(0, 1).Hash); ok {
		t.Fatal("a transaction is visible before it is durable")
	}
	rej, err := n.SubmitTx(devTransfer(1, 1), func(*Entry, error) {})
	if err != nil || rej.Code != core.RejectPending {
		t.Fatalf("second while pending: %v %+v", err, rej)
	}
	close(gate)
	if err := <-durable; err != nil {
		t.Fatal(err)
	}
	submitWait(t, n, devTransfer(1, 1))
}

func TestReplayRebuildsState(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, testConfig(t, dir))
	for i := range uint64(20) {
		submitWait(t, n, devTransfer(i, i*7))
	}
	deposited := make(chan *Entry, 1)
	if err := n.Deposit(core.Hash{}, core.Address{0xaa}, DevAddress(2), uint256.NewInt(99), func(e *Entry, _ error) { deposited <- e }); err != nil {
		t.Fatal(err)
	}
	dep := <-deposited
	if err := n.SetBaseFee(uint256.NewInt(3e9), func(error) {}); err != nil {
		t.Fatal(err)
	}
	before := n.StateHash()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = openNode(t, testConfig(t, dir))
	defer n.Close()
	if got := n.StateHash(); got != before {
		t.Fatalf("state hash after replay %x, before %x", got, before)
	}
	if fee := n.BaseFee(); fee.Uint64() != 3e9 {
		t.Fatalf("base fee %d", fee.Uint64())
	}
	// Replayed records keep their attestation and their logs are queryable.
	attested := make(chan struct{})
	n.OnAttested(dep.Rec.Tx.Hash, func() { close(attested) })
	<-attested
	logs, err := n.Logs(&LogFilter{Topics: [][]core.Hash{{core.DepositTopic()}}}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || logs[0].Receipt.Rec.Tx.Hash != dep.Rec.Tx.Hash {
		t.Fatalf("deposit logs after replay: %d", len(logs))
	}
}

func TestDuplicateDepositRefused(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir()))
	defer n.Close()
	id := core.Hash{1}
	done := make(chan error, 2)
	if err := n.Deposit(id, core.NativeToken, DevAddress(3), uint256.NewInt(1), func(_ *Entry, err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := n.Deposit(id, core.NativeToken, DevAddress(3), uint256.NewInt(1), func(*Entry, error) {}); err != ErrDuplicateDeposit {
		t.Fatalf("second deposit: %v", err)
	}
	<-done
}

func TestDevAccountsMatchTheStandardMnemonic(t *testing.T) {
	// The addresses anvil and hardhat print for the standard mnemonic.
	want := []string{
		"f39fd6e51aad88f6f4ce6ab8827279cfffb92266", "70997970c51812dc3a010c7d01b50e0d17dc79c8",
		"3c44cdddb6a900fa2b585dd299e03d12fa4293bc", "90f79bf6eb2c4f870365e785982e1f101e93b906",
		"15d34aaf54267db7d7c367839aaf71a00a2c6a65", "9965507d1a55bcc2695c58ba16fb37d819b0a4dc",
		"976ea74026e726554db657fa54763abd0c3a0aa9", "14dc79964da2c08b23698b3d3cc7ca32193d9955",
		"23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f", "a0ee7a142d267c1f36714e4a8f75612f20a79720",
	}
	for i, w := range want {
		a := DevAddress(i)
		if got := hex.EncodeToString(a[:]); got != w {
			t.Errorf("dev account %d: %s, want %s", i, got, w)
		}
	}
}

func TestCommitteeSizeChecked(t *testing.T) {
	for _, n := range []int{0, -1, attest.MaxCommitteeSize + 1} {
		cfg := testConfig(t, t.TempDir())
		cfg.Validators = n
		if _, err := Open(cfg); err == nil {
			t.Fatalf("committee of %d accepted", n)
		}
	}
}

// obTx is an orderbook transaction from dev account i with the given calldata.
func obTx(i int, nonce uint64, data []byte) *core.Tx {
	return &core.Tx{Hash: core.Hash{byte(i), byte(nonce), 0x0b}, Type: core.TxTypeDynamicFee, ChainID: 0x50d,
		Nonce: nonce, From: DevAddress(i), To: core.OrderbookAddress, HasTo: true, Gas: 500_000,
		GasFeeCap: *uint256.NewInt(2e9), Data: data}
}

func submitOrder(book clob.Hash, side clob.Side, lots, priceSteps uint64, deadline uint64) []byte {
	in := clob.Intent{Kind: clob.IntentSubmit, Book: book, Side: side, Deadline: deadline}
	in.Size.Mul(uint256.NewInt(lots), uint256.NewInt(1e15))
	in.Price.Mul(uint256.NewInt(priceSteps), uint256.NewInt(1e16))
	return abi.AppendSubmitOrder(nil, &in)
}

// TestReplayRebuildsOrderbook: orders, ticks and a market creation go
// through the log; a restart replays them to the same state hash, the
// same book and the same receipts' ticks.
func TestReplayRebuildsOrderbook(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Markets = DevMarkets()
	clock := cfg.Clock.(*ManualClock)
	n := openNode(t, cfg)
	book := DevMarkets()[0].ID
	var landed core.Hash
	for round := range uint64(5) {
		deadline := uint64((clock.NowMicros()/500_000 + 1) * 500_000)
		for i := range 4 {
			side := clob.Side(i % 2)
			tx := obTx(i, round, submitOrder(book, side, 3+uint64(i), 200_000-uint64(side)*100+round*10, deadline))
			submitWait(t, n, tx)
			landed = tx.Hash
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
	done := make(chan error, 1)
	m := clob.MarketConfig{ID: clob.Hash{7}, Name: "X/USD", Base: clob.Address{7}, Quote: clob.Address(core.NativeToken),
		IntervalUs: 1_000_000, TickPrecision: *uint256.NewInt(1e16), LotSize: *uint256.NewInt(1e15)}
	if err := n.CreateMarket(&m, func(err error) { done <- err }); err != nil || <-done != nil {
		t.Fatalf("create market: %v", err)
	}
	before, levels := n.StateHash(), n.levels(book)
	r, _ := n.Lookup(landed)
	if _, traded := n.ledger.Orderbook().LastPrice(book); !traded {
		t.Fatal("the crossing orders never traded")
	}
	if !r.InTick || !n.ledger.CheckSupply() {
		t.Fatalf("last order: in tick %v; supply conserved %v", r.InTick, n.ledger.CheckSupply())
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = openNode(t, cfg)
	defer n.Close()
	if got := n.StateHash(); got != before {
		t.Fatalf("state hash after replay %x, before %x", got, before)
	}
	if got := n.levels(book); got != levels {
		t.Fatalf("book after replay %s, before %s", got, levels)
	}
	r2, _ := n.Lookup(landed)
	if !r2.InTick || r2.TickUs != r.TickUs || r2.TickHash != r.TickHash {
		t.Fatalf("receipt tick after replay %+v, before %+v", r2, r)
	}
	if _, ok := n.ledger.Orderbook().Market(clob.Hash{7}); !ok {
		t.Fatal("created market lost in replay")
	}
	indexed := false
	for _, mk := range n.Markets() {
		indexed = indexed || mk.Config.ID == clob.Hash{7}
	}
	if !indexed {
		t.Fatal("created market missing from the ob_ index after replay")
	}
}

// levels renders both sides of a book for comparison.
func (n *Node) levels(book clob.Hash) string {
	var out string
	n.mu.RLock()
	defer n.mu.RUnlock()
	for _, side := range []clob.Side{clob.Buy, clob.Sell} {
		for _, l := range n.ledger.Orderbook().AppendLevels(nil, book, side, 0) {
			out += l.Price.Dec() + ":" + l.Volume.Dec() + " "
		}
		out += "| "
	}
	return out
}

// batchOf is what a verifier sees of a receipt's attestation batch.
type batchOf struct {
	seq  uint64
	ts   int64
	root [32]byte
	sig0 [65]byte
}

func attestedBatch(t *testing.T, n *Node, h core.Hash) batchOf {
	t.Helper()
	r, ok := n.Lookup(h)
	if !ok || !r.Attested {
		t.Fatalf("%x: known %v, attested %v", h[:4], ok, r.Attested)
	}
	return batchOf{r.Batch.Seq, r.Batch.Timestamp, r.Batch.Root, r.Batch.Sigs[0].Signature}
}

// TestRestartKeepsAttestations: after restarts every record keeps the batch
// it was attested in (nothing is signed again, nothing waits to be), and
// new batches continue the sequence: no (epoch, seq) ever names two roots.
func TestRestartKeepsAttestations(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, testConfig(t, dir))
	var hashes []core.Hash
	seen := map[uint64][32]byte{}
	record := func(n *Node, h core.Hash) batchOf {
		b := attestedBatch(t, n, h)
		if root, ok := seen[b.seq]; ok && root != b.root {
			t.Fatalf("batch %d signed over two roots", b.seq)
		}
		seen[b.seq] = b.root
		return b
	}
	want := map[core.Hash]batchOf{}
	nonce := uint64(0)
	for round := range 3 {
		for range 5 {
			tx := devTransfer(nonce, nonce+1)
			submitWait(t, n, tx)
			hashes = append(hashes, tx.Hash)
			want[tx.Hash] = record(n, tx.Hash)
			nonce++
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		n = openNode(t, testConfig(t, dir))
		inflight := n.inflight.Load()
		if inflight != 0 {
			t.Fatalf("round %d: %d replayed records wait to be attested again", round, inflight)
		}
		for _, h := range hashes {
			if got := record(n, h); got != want[h] {
				t.Fatalf("round %d: %x attested as %+v after the restart, %+v before", round, h[:4], got, want[h])
			}
		}
	}
	defer n.Close()
	tx := devTransfer(nonce, 1)
	submitWait(t, n, tx)
	if b := record(n, tx.Hash); b.seq != uint64(len(seen)) {
		t.Fatalf("the first batch after the restarts has seq %d, want %d (the next)", b.seq, len(seen))
	}
}

// TestDamagedBatchRefused: a stored batch whose records do not hash to its
// root stops Open with an error, rather than be signed over again.
func TestDamagedBatchRefused(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, testConfig(t, dir))
	submitWait(t, n, devTransfer(0, 1))
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	rewriteBatch(t, dir, 1, func(b *persist.Batch) { b.Root[0] ^= 1 })
	if n, err := Open(testConfig(t, dir)); err == nil || !strings.Contains(err.Error(), "damaged") {
		if err == nil {
			n.Close()
		}
		t.Fatalf("Open over a damaged batch: %v, want an error saying the directory is damaged", err)
	}
}

// rewriteBatch stores batch seq of the closed node in dir again, as edit
// changed it (with its records' rows).
func rewriteBatch(t *testing.T, dir string, seq uint64, edit func(*persist.Batch)) {
	t.Helper()
	lg, err := persist.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	b, err := lg.Batch(seq)
	if err != nil {
		t.Fatal(err)
	}
	edit(b)
	b.Records = make([]*core.TxRecord, b.Leaves)
	for i := range b.Records {
		s, err := lg.Records([]uint64{b.FirstPlace + uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		b.Records[i] = &s[0].Rec
	}
	if err := lg.Append(&persist.Group{Batches: []*persist.Batch{b}}); err != nil {
		t.Fatal(err)
	}
}

// TestOnAttestedDuringTick: neither acknowledging a transaction, nor
// attesting it, nor waiting for its receipt takes a lock of the
// sequencer's. The writer makes it durable and answers it, and registers a
// send that waits for its receipt as soon as it is durable (rpc's
// reply.durable); the attester signs it and wakes the waiter. While a
// tick holds the sequencer, none of that may block, nor lose the wake-up.
func TestOnAttestedDuringTick(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir()))
	defer n.Close()
	tx := devTransfer(0, 5)
	durable := make(chan error, 1)
	if rej, err := n.SubmitTx(tx, func(_ *Entry, err error) { durable <- err }); err != nil || !rej.OK() {
		t.Fatalf("submit: %v %+v", err, rej)
	}
	n.mu.Lock() // a tick holds the sequencer (and the attester waits for it)
	select {
	case err := <-durable:
		if err != nil {
			n.mu.Unlock()
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		n.mu.Unlock()
		t.Fatal("not durable while a tick holds the sequencer: the writer waits for the tick")
	}
	registered, attested := make(chan bool, 1), make(chan struct{})
	go func() { registered <- n.OnAttested(tx.Hash, func() { close(attested) }) }()
	select {
	case ok := <-registered:
		if !ok {
			t.Error("the durable transaction is unknown")
		}
	case <-time.After(2 * time.Second):
		t.Error("OnAttested waited for the sequencer")
	}
	select {
	case <-attested:
	case <-time.After(5 * time.Second):
		t.Error("not attested while a tick holds the sequencer: the attester waits for the tick")
	}
	n.mu.Unlock()
	if r, ok := n.Lookup(tx.Hash); !ok || !r.Attested {
		t.Fatalf("lookup after the tick: %v %+v", ok, r)
	}
}
