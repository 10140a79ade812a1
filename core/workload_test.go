package core

import (
	"math/rand/v2"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

// workload draws a seeded stream of inputs for a ledger, the way the
// sequencer would feed it: plain transfers, deposits, base-fee changes, new
// markets, orderbook calls (submits, batches, cancels, updates, transfers,
// with every order type, flag and ttl) and the ticks they make due, plus a
// share of inputs the ledger refuses (bad nonces, underpriced, unfunded,
// late or malformed intents, duplicate markets), withdrawals to the Bridge
// and through the orderbook (some refused, some unfunded), and the anvil
// controls. It reads the ledger it is
// given only to pick plausible nonces, targets and tick times.
type workload struct {
	r      *rand.Rand
	cfg    Config
	accts  []Address
	tokens []Address // tokens[0] is NativeToken
	books  []clob.MarketConfig
	mids   []int64 // price around which each book's orders cluster, in steps
	ids    []submitted
	nowUs  int64
	serial uint64 // makes transaction hashes and deposit ids unique
}

// submitted is an order id the workload has sent (admitted or not).
type submitted struct {
	id    clob.Hash
	book  clob.Hash
	owner Address
}

var (
	wlWeth   = Address{0x77, 19: 0xe7}
	wlToken2 = Address{0x78, 19: 0x02}
)

// newWorkload returns the stream of one seed and its genesis ledger, with
// orderbook limits drawn from the seed unless limits is set.
func newWorkload(seed uint64, limits clob.Limits) (*workload, *Ledger) {
	r := rand.New(rand.NewPCG(seed, 0x5a9))
	switch {
	case limits != (clob.Limits{}):
	case r.IntN(4) == 0:
		limits = clob.Limits{OrdersMax: 4 + r.IntN(12), PendingMax: 8} // books fill up
	default:
		limits = clob.Limits{OrdersMax: 32 + r.IntN(200), PendingMax: 64}
	}
	bridge := testBridge()
	bridge.Tokens[1].Token = wlWeth // wlToken2 is not bridged
	w := &workload{r: r, cfg: Config{ChainID: testChainID, BaseFee: *gwei, Orderbook: limits, Bridge: bridge,
		WithdrawalsPerBatchMax: 1 + r.IntN(4)},
		tokens: []Address{NativeToken, wlWeth, wlToken2}, nowUs: int64(r.IntN(3_000_000))}
	l := NewLedger(w.cfg)
	for i := range 6 {
		a := Address{0x10 + byte(i), 19: byte(i)}
		w.accts = append(w.accts, a)
		l.Genesis(NativeToken, a, new(uint256.Int).Mul(uint256.NewInt(uint64(1+r.IntN(20_000))), uint256.NewInt(1e18)))
		if r.IntN(6) != 0 {
			l.Genesis(wlWeth, a, new(uint256.Int).Mul(uint256.NewInt(uint64(r.IntN(50))), uint256.NewInt(1e18)))
		}
		l.Genesis(wlToken2, a, new(uint256.Int).Mul(uint256.NewInt(uint64(r.IntN(5_000))), uint256.NewInt(1e18)))
	}
	for i := range 2 {
		m := w.market(byte(i))
		if err := l.GenesisMarket(&m); err != nil {
			panic(err)
		}
		w.books = append(w.books, m)
		w.mids = append(w.mids, int64(100+r.IntN(3000)))
	}
	return w, l
}

// market returns a valid spot market quoted in the native token.
func (w *workload) market(k byte) clob.MarketConfig {
	r := w.r
	// unitQuote = lot × tick / 2e18 must be whole: lot 10^a, tick 10^b, a+b ≥ 19.
	a := 14 + r.IntN(4)
	b := 19 - a + r.IntN(2)
	var lot, tick uint256.Int
	lot.Exp(uint256.NewInt(10), uint256.NewInt(uint64(a)))
	tick.Exp(uint256.NewInt(10), uint256.NewInt(uint64(b)))
	fees := []uint64{0, 1e14, 1e15, 2_500_000_000_000_000}
	m := clob.MarketConfig{ID: clob.Hash{0xb0 ^ k, 31: k}, Name: "M", BaseSymbol: "B", QuoteSymbol: "N", Kind: clob.Spot,
		Base: clob.Address(w.tokens[1+r.IntN(2)]), Quote: clob.Address(NativeToken),
		IntervalUs: []int64{500_000, 1_000_000, 2_000_000}[r.IntN(3)], TickPrecision: tick, LotSize: lot}
	m.MakerFee.SetUint64(fees[r.IntN(len(fees))])
	m.TakerFee.SetUint64(fees[r.IntN(len(fees))])
	return m
}

func (w *workload) chance(pct int) bool { return w.r.IntN(100) < pct }

// advance moves the clock, as the sequencer's would between inputs.
func (w *workload) advance() {
	if w.chance(3) {
		w.nowUs += int64(1+w.r.IntN(6)) * 1_000_000
		return
	}
	w.nowUs += int64(w.r.IntN(300_000))
}

// tick returns the next tick the sequencer would apply to l, if any: the
// earliest due one, or now and then a later grid point (so that intents
// whose deadline passes are dropped).
func (w *workload) tick(l *Ledger) (*Input, bool) {
	T, ok := l.NextTickDue(w.nowUs)
	if !ok {
		return nil, false
	}
	if skip := w.nowUs / 2_000_000 * 2_000_000; skip > T && w.chance(3) {
		T = skip
	}
	return &Input{Kind: InputTick, TimeUs: T}, true
}

// next draws one input that is not a tick.
func (w *workload) next(l *Ledger) *Input {
	w.serial++
	if w.chance(3) {
		return w.lockOrRecover(l)
	}
	if w.chance(2) {
		return w.control(l)
	}
	switch x := w.r.IntN(100); {
	case x < 55:
		return w.orderbookTx(l)
	case x < 80:
		return w.transferTx(l)
	case x < 85:
		return w.withdrawTx(l)
	case x < 95:
		in := &Input{Kind: InputDeposit, DepositID: Hash{0xde, 24: byte(w.serial >> 8), 31: byte(w.serial)},
			Token: w.tokens[w.r.IntN(len(w.tokens))], To: w.account()}
		in.Amount.Mul(uint256.NewInt(uint64(1+w.r.IntN(1000))), uint256.NewInt(1e16))
		return in
	case x < 99 || w.chance(50):
		in := &Input{Kind: InputSetBaseFee}
		in.BaseFee.SetUint64([]uint64{0, 5e8, 1e9, 1_500_000_000, 3e9}[w.r.IntN(5)])
		return in
	}
	m := w.market(byte(len(w.books)))
	if w.chance(30) {
		m.ID = w.books[w.r.IntN(len(w.books))].ID // refused: exists
	} else if _, exists := l.Orderbook().Market(m.ID); !exists {
		w.books = append(w.books, m)
		w.mids = append(w.mids, int64(100+w.r.IntN(3000)))
	}
	return &Input{Kind: InputCreateMarket, Market: m}
}

// lockOrRecover locks an account (now and then one that never sent a
// transaction: refused), or sends a recovery for a locked one, mostly a
// valid one.
func (w *workload) lockOrRecover(l *Ledger) *Input {
	for _, a := range w.accts {
		target, locked := l.RecoveryTarget(a)
		if !locked {
			continue
		}
		tx := w.tx(l, a)
		tx.To = RecoveryAddress
		switch x := w.r.IntN(100); {
		case x < 5:
			target.Nonce++
		case x < 10:
			target.Hash[0] ^= 1
		case x < 13:
			tx.Value.SetUint64(1)
		}
		tx.Data = recoverCall(target)
		return &Input{Kind: InputTx, Tx: tx, TimeUs: w.nowUs}
	}
	return &Input{Kind: InputLockAccount, To: w.account()}
}

// control draws an anvil control (controls.go): a balance set (now and
// then to zero, on an account with orders or debt too), a nonce moved
// (now and then backwards: refused), or a clock offset.
func (w *workload) control(l *Ledger) *Input {
	a := w.account()
	switch w.r.IntN(3) {
	case 0:
		in := &Input{Kind: InputSetBalance, To: a}
		if !w.chance(20) {
			in.Amount.Mul(uint256.NewInt(uint64(w.r.IntN(20_000))), uint256.NewInt(1e18))
		}
		return in
	case 1:
		nonce := l.Nonce(a) + uint64(w.r.IntN(3))
		if w.chance(20) && nonce > 0 {
			nonce = l.Nonce(a) - 1
		}
		return &Input{Kind: InputSetNonce, To: a, Nonce: nonce}
	}
	return &Input{Kind: InputClockOffset, TimeUs: int64(w.r.IntN(1 << 40))}
}

// account is a known account, now and then one the ledger has never seen.
func (w *workload) account() Address {
	if w.chance(5) {
		return Address{0x99, 19: byte(w.r.IntN(4))}
	}
	return w.accts[w.r.IntN(len(w.accts))]
}

// tx is a transaction from `from` with its next nonce (sometimes a wrong
// one) and a fee cap that is mostly enough.
func (w *workload) tx(l *Ledger, from Address) Tx {
	tx := Tx{Hash: Hash{0x7a, 24: byte(w.serial >> 8), 31: byte(w.serial)}, Type: TxTypeDynamicFee, ChainID: testChainID,
		Nonce: l.Nonce(from), From: from, HasTo: true, Gas: TxGas}
	switch {
	case w.chance(3):
		tx.Nonce++
	case w.chance(3) && tx.Nonce > 0:
		tx.Nonce--
	}
	fee := l.BaseFee()
	tx.GasFeeCap.Mul(&fee, uint256.NewInt(2))
	tx.GasFeeCap.AddUint64(&tx.GasFeeCap, uint64(w.r.IntN(1000)))
	if w.chance(4) {
		tx.GasFeeCap.Rsh(&fee, 1)
	}
	tx.GasTipCap.SetUint64(uint64(w.r.IntN(3)))
	return tx
}

func (w *workload) transferTx(l *Ledger) *Input {
	tx := w.tx(l, w.account())
	tx.To = w.account()
	if w.chance(10) {
		tx.To = Address{0x80, 19: byte(w.r.IntN(16))} // a new account
	}
	tx.Value.Mul(uint256.NewInt(uint64(w.r.IntN(1000))), uint256.NewInt(1e16))
	if w.chance(2) {
		tx.Value.Lsh(uint256.NewInt(1), 100) // more than anyone has
	}
	return &Input{Kind: InputTx, Tx: tx, TimeUs: w.nowUs}
}

// withdrawTx draws a withdrawal of a bridged token (now and then of one
// that is not, or with a misaligned or late deadline), to the Bridge or
// through the orderbook.
func (w *workload) withdrawTx(l *Ledger) *Input {
	tx := w.tx(l, w.account())
	tx.To = BridgeAddress
	var amount uint256.Int
	amount.Mul(uint256.NewInt(uint64(1+w.r.IntN(3000))), uint256.NewInt(1e16))
	d := uint64((w.nowUs/500_000 + 1 + int64(w.r.IntN(3))) * 500_000)
	switch {
	case w.chance(3):
		d++
	case w.chance(3):
		d -= 500_000
	}
	tx.Data = AppendWithdrawCall(nil, w.tokens[w.r.IntN(len(w.tokens))], w.account(), &amount, d)
	if tx.Nonce%2 == 1 { // not a draw: the stream of draws stays the one the other tests were tuned on
		tx.To = OrderbookAddress
	}
	return &Input{Kind: InputTx, Tx: tx, TimeUs: w.nowUs}
}

// orderbookTx draws one orderbook call: a single intent or a batch.
func (w *workload) orderbookTx(l *Ledger) *Input {
	from := w.accts[w.r.IntN(len(w.accts))]
	tx := w.tx(l, from)
	tx.To, tx.Gas = OrderbookAddress, 100_000
	if w.chance(1) {
		tx.Value.SetUint64(1)
	}
	n := 1
	if w.chance(25) {
		n = 2 + w.r.IntN(4)
	}
	// A batch shares one deadline: the 2 s grid suits every interval.
	grid := int64(2_000_000)
	home := w.r.IntN(len(w.books))
	if n == 1 {
		grid = w.books[home].IntervalUs
	}
	d := uint64((w.nowUs/grid + 1 + int64(w.r.IntN(2))) * grid)
	if w.chance(3) {
		d++
	}
	inner := make([][]byte, n)
	for i := range n {
		in := w.intent(l, from, home, d)
		if in.Kind == clob.IntentSubmit {
			w.ids = append(w.ids, submitted{id: clob.OrderID(clob.Address(from), tx.Nonce, uint32(i)), book: in.Book, owner: from})
		}
		inner[i] = abi.AppendIntent(nil, &in)
	}
	tx.Data = inner[0]
	if n > 1 {
		tx.Data = abi.AppendSubmitBatch(nil, inner)
	}
	return &Input{Kind: InputTx, Tx: tx, TimeUs: w.nowUs}
}

func (w *workload) intent(l *Ledger, from Address, home int, deadline uint64) clob.Intent {
	book := home
	if w.chance(15) {
		book = w.r.IntN(len(w.books))
	}
	m := &w.books[book]
	in := clob.Intent{Book: m.ID, Deadline: deadline}
	switch x := w.r.IntN(100); {
	case x < 55:
		in.Kind = clob.IntentSubmit
		w.submit(&in, book)
	case x < 70:
		in.Kind = clob.IntentCancel
		in.OrderID = w.target(l, from, m.ID)
	case x < 88:
		in.Kind = clob.IntentUpdate
		in.OrderID = w.target(l, from, m.ID)
		in.Size.Mul(uint256.NewInt(uint64(1+w.r.IntN(25))), &m.LotSize)
		in.Price.Mul(uint256.NewInt(uint64(w.mids[book]+int64(w.r.IntN(31))-15)), &m.TickPrecision)
	default:
		in.Kind = clob.IntentTransfer
		in.Token = clob.Address(w.tokens[w.r.IntN(len(w.tokens))])
		in.To = clob.Address(w.account())
		in.Amount.Mul(uint256.NewInt(uint64(w.r.IntN(500))), uint256.NewInt(1e15))
	}
	return in
}

func (w *workload) submit(in *clob.Intent, book int) {
	m := &w.books[book]
	in.Side = clob.Side(w.r.IntN(2))
	in.Size.Mul(uint256.NewInt(uint64(1+w.r.IntN(20))), &m.LotSize)
	in.Price.Mul(uint256.NewInt(uint64(w.mids[book]+int64(w.r.IntN(31))-15)), &m.TickPrecision)
	switch x := w.r.IntN(100); {
	case x < 10:
		in.Type, in.Flags = clob.Market, clob.FlagIOC
		in.Price.Mul(uint256.NewInt(uint64(2*w.mids[book])), &m.TickPrecision)
	case x < 25:
		in.Flags = clob.FlagIOC
	case x < 40:
		in.Flags = clob.FlagPostOnly
	case x < 42:
		in.Flags = clob.FlagIOC | clob.FlagPostOnly // refused
	}
	if w.chance(20) {
		in.TTL = uint64(w.r.IntN(3))*uint64(m.IntervalUs) + uint64(w.r.IntN(int(m.IntervalUs)))
	}
	if w.chance(2) {
		in.Size.AddUint64(&in.Size, 1) // not a multiple of the lot
	}
}

// play applies steps steps of the workload to l, settling every
// transaction at once (as a sequencer whose log keeps up would).
func (w *workload) play(l *Ledger, steps int) {
	for range steps {
		w.advance()
		for range 200 {
			in, ok := w.tick(l)
			if !ok {
				break
			}
			l.Apply(in)
		}
		if rec, _ := l.Apply(w.next(l)); rec != nil {
			l.Settle(rec)
		}
	}
}

// target picks an order to cancel or update: mostly a live one of this
// owner and book, sometimes anyone's, sometimes one that never existed.
func (w *workload) target(l *Ledger, from Address, book clob.Hash) clob.Hash {
	if len(w.ids) == 0 || w.chance(5) {
		return clob.Hash{0xde, 0xad, 31: byte(w.r.IntN(256))}
	}
	n := len(w.ids)
	if w.chance(85) {
		var mine []clob.Hash
		for i := n - 1; i >= 0 && i >= n-300 && len(mine) < 8; i-- {
			s := w.ids[i]
			if _, live := l.Orderbook().Order(s.id); live && s.book == book && s.owner == from {
				mine = append(mine, s.id)
			}
		}
		if len(mine) > 0 {
			return mine[w.r.IntN(len(mine))]
		}
	}
	return w.ids[n-1-w.r.IntN(min(n, 30))].id
}
