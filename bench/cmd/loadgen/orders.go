package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ethabi "github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/bench/load"
	"github.com/ledgervenue/node/bench/txgen"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/subs"
)

// Order settings. Buyers bid 1..orderSpreadMax price steps above a fixed
// mid and sellers ask as far below it, so every buy crosses every sell; all
// orders are limit IOC, so nothing rests and each order lives one tick.
const (
	orderGas       = core.TxGas // what every transaction uses, eth_estimateGas's answer
	orderMidSteps  = 200_000    // the mid, in price steps: 2 000 USD per WETH at the 0.01 step
	orderSpreadMax = 3          // price steps away from the mid
	orderLotsMax   = 4          // sizes are 1..orderLotsMax lots
	warmupOrders   = 16         // per account, in the untimed warm-up run
	// The orders of a run share one deadline this far past their signing,
	// so pre-signed orders stay valid through the run, and no further: a
	// bot's deadlines are near.
	orderDeadlineAhead    = 60 * time.Second
	orderDeadlineAheadMax = 9 * time.Minute
	// After a run: how long the sampled orders may take to show their tick
	// (receipt blockNumber) and the tick's logs to be attested.
	landWait     = 10 * time.Second
	landPoll     = 100 * time.Millisecond
	receiptBatch = 100 // receipts per JSON-RPC batch request
	// fillIDsPerCall is the order ids per eth_getLogs: as many topic
	// alternatives as the node takes at one position.
	fillIDsPerCall = subs.TopicAlternativesMax
	shownErrors    = 3 // refusals and other problems printed per run
	// clockFollowEvery is how often a manual node clock is moved to the
	// wall time while the orders scenario runs.
	clockFollowEvery = 10 * time.Millisecond
)

// ordersMarket is the market the scenario trades: the WETH/USD dev market.
func ordersMarket() clob.MarketConfig { return node.DevMarkets()[0] }

// perpMarket is the market the perp scenario trades: the ETH-PERP dev market.
func perpMarket() clob.MarketConfig { return node.DevPerpMarkets()[0] }

// midSteps is where a market's orders cross: the spot scenario's fixed mid,
// a perp market's initial oracle price (so that positions open near the
// mark and no account drifts toward liquidation as the run goes on).
func midSteps(m *clob.MarketConfig) uint64 {
	if m.Kind != clob.Perp {
		return orderMidSteps
	}
	var steps uint256.Int
	steps.Div(&m.Perp.OraclePrice, &m.TickPrecision)
	return steps.Uint64()
}

// ordersRun is what one run of the orders scenario measured.
type ordersRun struct {
	send     *load.Result // eth_sendRawTransaction of every order
	refused  []string     // the first answers that were not a hash
	signTook time.Duration
	// shortened is the run's length when the orders' deadline cut it
	// short, else 0.
	shortened time.Duration
	// Of the admitted orders, sampled had their receipts read; landed
	// showed a tick (blockNumber) and an OrderSubmitted log; filled got at
	// least one OrderFilled log. tick holds blockNumber − send time of the
	// landed ones (the histogram counts a negative one as 0: tickMin keeps
	// the smallest exactly).
	sampled, landed, filled int
	tick                    load.Histogram
	tickMin                 time.Duration
	problems                int      // sampled orders without a proper receipt
	problemText             []string // the first few
}

// errors counts refusals, unanswered orders and sampled orders that did not
// land properly.
func (r *ordersRun) errors() int64 { return r.send.Errors + int64(r.problems) }

func (r *ordersRun) fillRate() float64 {
	if r.landed == 0 {
		return 0
	}
	return float64(r.filled) / float64(r.landed)
}

func (r *ordersRun) problem(format string, args ...any) {
	r.problems++
	if len(r.problemText) < shownErrors {
		r.problemText = append(r.problemText, fmt.Sprintf(format, args...))
	}
}

// runOrders measures admitted orders/s, their send latency, and the
// submit→tick latency and fill rate of a sample of them.
func runOrders(ctx context.Context, w io.Writer, e *env, o *options) error {
	if err := checkAccounts(o); err != nil {
		return err
	}
	m := ordersMarket()
	stop, err := followWallClock(ctx, e)
	if err != nil {
		return err
	}
	_, err = ordersRuns(ctx, w, e, o, &m)
	if serr := stop(); err == nil && serr != nil {
		err = serr
	}
	return err
}

// runPerp measures the orders scenario on the spot dev market, then on the
// ETH-PERP dev market, in one run, and prints the ratio of their median
// rates: what margin, positions and the perp tick cost a write.
func runPerp(ctx context.Context, w io.Writer, e *env, o *options) error {
	if err := checkAccounts(o); err != nil {
		return err
	}
	stop, err := followWallClock(ctx, e)
	if err != nil {
		return err
	}
	spot, perp := ordersMarket(), perpMarket()
	var rates [2]float64
	for i, m := range []*clob.MarketConfig{&spot, &perp} {
		if rates[i], err = ordersRuns(ctx, w, e, o, m); err != nil {
			break
		}
	}
	if serr := stop(); err == nil && serr != nil {
		err = serr
	}
	if err == nil {
		fmt.Fprintf(w, "  perp/spot median orders/s: %.0f / %.0f = %.3f\n", rates[1], rates[0], rates[1]/rates[0])
	}
	return err
}

func checkAccounts(o *options) error {
	if accounts := o.conns * o.pipeline; accounts < 2 {
		return fmt.Errorf("needs at least 2 accounts (conns x pipeline) to have a buyer and a seller, got %d", accounts)
	}
	return nil
}

// ordersRuns runs the orders scenario on market m and returns the median
// admitted orders/s of its timed runs.
func ordersRuns(ctx context.Context, w io.Writer, e *env, o *options, m *clob.MarketConfig) (float64, error) {
	accounts := o.conns * o.pipeline
	fmt.Fprintf(w, "\n== orders: %d accounts (conns x pipeline; %d buyers, %d sellers), limit IOC orders of 1..%d lots on %s "+
		"at 1..%d steps across a mid of %s, each account sending its orders one after another\n",
		accounts, (accounts+1)/2, accounts/2, orderLotsMax, m.Name, orderSpreadMax, priceText(m, midSteps(m)))
	if e.manual != nil {
		fmt.Fprintf(w, "  clock manual: moved to the wall time by admin_advanceTime every %v during the scenario\n", clockFollowEvery)
	}
	warm, err := ordersOnce(ctx, e, o, m, 0, warmupOrders, warmupDuration(o.duration), 0)
	if err != nil {
		return 0, err
	}
	if n := warm.errors(); n > 0 {
		return 0, fmt.Errorf("warm-up: %d errors: %s", n, strings.Join(append(warm.refused, warm.problemText...), "; "))
	}
	perAccount := o.orders
	if perAccount == 0 {
		perAccount = sizeTxs(warm.send.Rate(), o.duration, accounts)
	}
	var runs []*ordersRun
	var errs int64
	for i := range o.runs {
		r, err := ordersOnce(ctx, e, o, m, i+1, perAccount, o.duration, o.fillSample)
		if err != nil {
			return 0, err
		}
		if i == 0 {
			fmt.Fprintf(w, "  signed %d orders in %v (client side, before timing); %d per account\n",
				accounts*perAccount, round(r.signTook), perAccount)
		}
		printRun(w, fmt.Sprintf("run %d ours", i+1), r.send)
		printOrdersRun(w, r)
		runs = append(runs, r)
		errs += r.errors()
		if o.orders == 0 && r.send.Exhausted { // the warm-up guessed low: size up
			perAccount = max(perAccount, sizeTxs(r.send.Rate(), o.duration, accounts))
		}
	}
	sends := make([]*load.Result, len(runs))
	for i, r := range runs {
		sends[i] = r.send
	}
	s := summarize(sends)
	printSummary(w, "median ours", &s)
	printOrdersSummary(w, runs)
	if errs > 0 {
		return 0, fmt.Errorf("%d order errors", errs)
	}
	return s.rate, nil
}

func printOrdersRun(w io.Writer, r *ordersRun) {
	if r.shortened > 0 {
		fmt.Fprintf(w, "    run shortened to %v: the orders' deadline is at most %v after signing\n", round(r.shortened), orderDeadlineAheadMax)
	}
	if r.sampled > 0 {
		fmt.Fprintf(w, "    submit→tick        p50 %8v  p90 %8v  p99 %8v  max %8v  of %d sampled orders, %d landed, %.1f%% filled\n",
			round(r.tick.Quantile(0.50)), round(r.tick.Quantile(0.90)), round(r.tick.Quantile(0.99)), round(r.tick.Max()),
			r.sampled, r.landed, 100*r.fillRate())
	}
	if r.landed > 0 && r.tickMin <= 0 {
		fmt.Fprintf(w, "    some ticks are not after their order's send time (min %v): the node's clock lags the client's\n", r.tickMin)
	}
	if len(r.refused) > 0 {
		fmt.Fprintf(w, "    %d refused or unanswered; first: %s\n", r.send.Errors, strings.Join(r.refused, " | "))
	}
	if r.problems > 0 {
		fmt.Fprintf(w, "    %d sampled orders did not land properly; first: %s\n", r.problems, strings.Join(r.problemText, " | "))
	}
}

// printOrdersSummary prints the medians over the runs of the submit→tick
// percentiles and of the fill rate.
func printOrdersSummary(w io.Writer, runs []*ordersRun) {
	var sampled []*ordersRun
	for _, r := range runs {
		if r.landed > 0 {
			sampled = append(sampled, r)
		}
	}
	if len(sampled) == 0 {
		return
	}
	med := func(f func(*ordersRun) float64) float64 {
		v := make([]float64, len(sampled))
		for i, r := range sampled {
			v[i] = f(r)
		}
		return medianOf(v)
	}
	q := func(x float64) time.Duration {
		return time.Duration(med(func(r *ordersRun) float64 { return float64(r.tick.Quantile(x)) }))
	}
	fmt.Fprintf(w, "  median submit→tick p50 %8v  p90 %8v  p99 %8v  max %8v  filled %.1f%% (%d runs)\n",
		round(q(0.50)), round(q(0.90)), round(q(0.99)),
		round(time.Duration(med(func(r *ordersRun) float64 { return float64(r.tick.Max()) }))),
		100*med((*ordersRun).fillRate), len(sampled))
}

// ordersOnce funds fresh accounts (run index r), pre-signs perAccount
// orders each on m and times sending them for up to d; then, if sample > 0,
// it reads the receipts and fills of up to sample of the admitted orders.
func ordersOnce(ctx context.Context, e *env, o *options, m *clob.MarketConfig, r, perAccount int, d time.Duration, sample int) (*ordersRun, error) {
	accounts := o.conns * o.pipeline
	keys, addrs := deriveKeys(o.seed+"/orders/"+m.Name, r, accounts)
	if err := depositAll(ctx, e.oursAddr, e.adminHeader(), orderFunding(m, addrs, perAccount)); err != nil {
		return nil, err
	}
	start := time.Now()
	ahead := min(d+orderDeadlineAhead, orderDeadlineAheadMax)
	deadline := start.Add(ahead).UnixMicro() / m.IntervalUs * m.IntervalUs
	bodies, err := signAll(keys, perAccount, func(account int, key *ecdsa.PrivateKey, signer types.Signer, nonce uint64) ([]byte, error) {
		return signedOrder(key, signer, nonce, orderIntent(m, account, nonce, uint64(deadline)))
	})
	if err != nil {
		return nil, err
	}
	res := &ordersRun{signTook: time.Since(start)}
	// An order is admitted only before its deadline's tick: stop a second
	// early (this shortens only runs close to the 9-minute bound).
	if left := time.Until(time.UnixMicro(deadline)) - time.Second; left < d {
		d, res.shortened = left, left
	}
	if d <= 0 {
		return nil, fmt.Errorf("signing took %v, past the orders' deadline", round(res.signTook))
	}
	sentUs := make([][]int64, accounts)
	for a := range sentUs {
		sentUs[a] = make([]int64, perAccount)
	}
	refusals := refusalLog{max: shownErrors}
	runtime.GC() // the signing garbage is the client's, not the run's
	if res.send, err = sendSequences(ctx, e, o, bodies, d,
		func(account, nonce int) { sentUs[account][nonce] = time.Now().UnixMicro() }, refusals.check); err != nil {
		return nil, err
	}
	res.refused = refusals.first
	if err := checkNonces(e, addrs, res.send); err != nil {
		return nil, err
	}
	if sample > 0 {
		err = measureFills(ctx, e, m, res, pickSample(e, addrs, bodies, sentUs, sample), start)
	}
	return res, err
}

// orderFunding gives every account what perAccount orders can cost at most:
// buyers the native token for gas and their reservations (the quote amount
// at their limit plus the larger fee), sellers gas and the base token. On a
// perp market both sides get the buyers' native amount: far more than the
// initial margin (a twentieth of it) and the fees.
func orderFunding(m *clob.MarketConfig, addrs []common.Address, perAccount int) []deposit {
	n := big.NewInt(int64(perAccount))
	gas := new(big.Int).Mul(n, big.NewInt(orderGas*feeCapWei))
	baseMax := new(big.Int).Mul(big.NewInt(orderLotsMax), m.LotSize.ToBig())
	priceMax := new(big.Int).Mul(big.NewInt(int64(midSteps(m))+orderSpreadMax), m.TickPrecision.ToBig())
	one := big.NewInt(1e18)
	quoteMax := new(big.Int).Div(new(big.Int).Mul(baseMax, priceMax), one)
	feeRate := m.MakerFee.ToBig()
	if t := m.TakerFee.ToBig(); t.Cmp(feeRate) > 0 {
		feeRate = t
	}
	fee := new(big.Int).Div(new(big.Int).Mul(quoteMax, feeRate), one)
	buyerPerOrder := new(big.Int).Add(quoteMax, fee)
	buyer := new(big.Int).Add(gas, new(big.Int).Mul(n, buyerPerOrder.Add(buyerPerOrder, big.NewInt(1))))
	sellerBase := new(big.Int).Mul(n, baseMax)
	baseToken := common.Address(m.Base).Hex()
	var ds []deposit
	for i, a := range addrs {
		if isBuyer(i) || m.Kind == clob.Perp {
			ds = append(ds, deposit{token: nativeTokenHx, to: a, amount: buyer})
		} else {
			ds = append(ds, deposit{token: nativeTokenHx, to: a, amount: gas}, deposit{token: baseToken, to: a, amount: sellerBase})
		}
	}
	return ds
}

// isBuyer: even accounts buy, odd ones sell.
func isBuyer(account int) bool { return account%2 == 0 }

// orderIntent is order `nonce` of `account`: a limit IOC order of 1..4 lots
// (a buyer and the seller next to it use the same sizes), 1..3 steps above
// the mid for a buyer, below it for a seller.
func orderIntent(m *clob.MarketConfig, account int, nonce, deadline uint64) *clob.Intent {
	lots := 1 + (uint64(account/2)+nonce)%orderLotsMax
	spread := 1 + (nonce+uint64(account))%orderSpreadMax
	in := &clob.Intent{Kind: clob.IntentSubmit, Book: m.ID, Side: clob.Buy, Type: clob.Limit, Flags: clob.FlagIOC,
		Deadline: deadline}
	mid := midSteps(m)
	steps := mid + spread
	if !isBuyer(account) {
		in.Side, steps = clob.Sell, mid-spread
	}
	in.Size.Mul(uint256.NewInt(lots), &m.LotSize)
	in.Price.Mul(uint256.NewInt(steps), &m.TickPrecision)
	return in
}

// signedOrder returns the raw EIP-1559 submitOrder transaction of in.
func signedOrder(key *ecdsa.PrivateKey, signer types.Signer, nonce uint64, in *clob.Intent) ([]byte, error) {
	to := common.Address(core.OrderbookAddress)
	tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: nonce, GasTipCap: new(big.Int), GasFeeCap: big.NewInt(feeCapWei),
		Gas: orderGas, To: &to, Data: abi.AppendSubmitOrder(nil, in),
	})
	if err != nil {
		return nil, fmt.Errorf("cannot sign an order: %w", err)
	}
	return tx.MarshalBinary()
}

// priceText prints steps of m's price step as a decimal quote amount.
func priceText(m *clob.MarketConfig, steps uint64) string {
	wei := new(big.Int).Mul(new(big.Int).SetUint64(steps), m.TickPrecision.ToBig())
	return new(big.Rat).SetFrac(wei, big.NewInt(1e18)).FloatString(2)
}

// refusalLog is a load Check that accepts hash answers and keeps the first
// few others; it is safe for concurrent use.
type refusalLog struct {
	max   int
	mu    sync.Mutex
	first []string
}

func (l *refusalLog) check(status int, body []byte) bool {
	if hashAnswer(status, body) {
		return true
	}
	l.mu.Lock()
	if len(l.first) < l.max {
		l.first = append(l.first, refusalText(status, body))
	}
	l.mu.Unlock()
	return false
}

// refusalText is a refused answer as code, message and data, with a
// revert's Error(string) data decoded (the CLOB's validation reason).
func refusalText(status int, body []byte) string {
	var a rpcAnswer
	if status != 200 || json.Unmarshal(body, &a) != nil || a.Error == nil {
		return fmt.Sprintf("status %d %s", status, clip(body, 300))
	}
	text := fmt.Sprintf("%d %s", a.Error.Code, a.Error.Message)
	var data string
	if json.Unmarshal(a.Error.Data, &data) == nil && data != "" {
		if raw, err := hexutil.Decode(data); err == nil {
			if reason, err := ethabi.UnpackRevert(raw); err == nil {
				data = reason
			}
		}
		text += ": " + data
	}
	return text
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// sampledOrder is one admitted order whose receipt is read after the run.
type sampledOrder struct {
	hash   common.Hash
	sentUs int64
}

// pickSample returns up to n of the admitted orders, spread evenly over all
// of them (accounts in turn, each in nonce order). Each account's orders are
// admitted in nonce order and a refusal consumes no nonce, so the admitted
// ones are those below the account's ledger nonce.
func pickSample(e *env, addrs []common.Address, bodies [][][]byte, sentUs [][]int64, n int) []sampledOrder {
	admitted := make([]int, len(addrs))
	total := 0
	for a, addr := range addrs {
		admitted[a] = min(int(e.node.Nonce(core.Address(addr))), len(bodies[a]))
		total += admitted[a]
	}
	n = min(n, total)
	out := make([]sampledOrder, 0, n)
	a, before := 0, 0 // account of the next pick; admitted orders of the accounts before it
	for i := range n {
		g := int(int64(i) * int64(total) / int64(n))
		for g >= before+admitted[a] {
			before += admitted[a]
			a++
		}
		nonce := g - before
		out = append(out, sampledOrder{hash: bodyTxHash(bodies[a][nonce]), sentUs: sentUs[a][nonce]})
	}
	return out
}

// bodyTxHash is the hash of the transaction an eth_sendRawTransaction body
// carries.
func bodyTxHash(body []byte) common.Hash {
	raw, err := hex.DecodeString(string(body[len(txgen.SendRawPrefix) : len(body)-len(txgen.SendRawSuffix)]))
	if err != nil {
		panic("BUG: malformed eth_sendRawTransaction body: " + err.Error())
	}
	return crypto.Keccak256Hash(raw)
}

// measureFills waits until the sampled orders show their tick, records
// blockNumber − send time of each, waits until those ticks' logs are
// attested, and counts the orders with an OrderFilled log.
func measureFills(ctx context.Context, e *env, m *clob.MarketConfig, res *ordersRun, sample []sampledOrder, start time.Time) error {
	res.sampled = len(sample)
	if len(sample) == 0 {
		return nil
	}
	// The last order was admitted before now: its tick is at the latest the
	// next boundary; give it a moment to run and become durable.
	if err := sleep(ctx, time.Until(time.UnixMicro(landing(time.Now().UnixMicro(), m.IntervalUs)))+50*time.Millisecond); err != nil {
		return err
	}
	give := time.Now().Add(landWait)
	ids, ticks, err := awaitLandings(ctx, e, res, sample, give)
	if err != nil {
		return err
	}
	fromSec := start.Unix() - 1
	if err := awaitTicksAttested(ctx, e, m, ticks, fromSec, give); err != nil {
		return err
	}
	filled, err := filledOrders(ctx, e, m, ids, fromSec)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if filled[id] {
			res.filled++
		}
	}
	return nil
}

// awaitLandings polls the sampled orders' receipts until each shows the tick
// it landed in, or until give, recording submit→tick latencies. It returns
// the landed orders' ids and the hashes of their ticks.
func awaitLandings(ctx context.Context, e *env, res *ordersRun, sample []sampledOrder, give time.Time) ([]common.Hash, map[common.Hash]bool, error) {
	pending := make([]int, len(sample))
	for i := range pending {
		pending[i] = i
	}
	ids := make([]common.Hash, 0, len(sample))
	ticks := map[common.Hash]bool{}
	for len(pending) > 0 {
		hashes := make([]common.Hash, len(pending))
		for j, i := range pending {
			hashes[j] = sample[i].hash
		}
		receipts, err := readReceipts(ctx, e, hashes)
		if err != nil {
			return nil, nil, err
		}
		var still []int
		for j, i := range pending {
			rc := receipts[j]
			if rc == nil || rc.BlockNumber == nil || rc.BlockHash == nil {
				still = append(still, i)
				continue
			}
			if id, ok := recordLanding(res, &sample[i], rc); ok {
				ids = append(ids, id)
				ticks[*rc.BlockHash] = true
			}
		}
		pending = still
		if len(pending) > 0 && time.Now().After(give) {
			for _, i := range pending {
				res.problem("order %s: no tick in its receipt %v after the run", sample[i].hash, landWait)
			}
			break
		}
		if len(pending) > 0 {
			if err := sleep(ctx, landPoll); err != nil {
				return nil, nil, err
			}
		}
	}
	return ids, ticks, nil
}

// recordLanding checks one landed order's receipt and records its latency;
// it reports the order's id, or false with a problem recorded.
func recordLanding(res *ordersRun, s *sampledOrder, rc *receiptJSON) (common.Hash, bool) {
	tickUs, err := strconv.ParseUint(strings.TrimPrefix(*rc.BlockNumber, "0x"), 16, 63)
	id, ok := rc.orderID()
	switch {
	case err != nil:
		res.problem("order %s: bad blockNumber %q", s.hash, *rc.BlockNumber)
		return common.Hash{}, false
	case rc.Status != "0x1":
		res.problem("order %s: receipt status %s", s.hash, rc.Status)
		return common.Hash{}, false
	case !ok:
		res.problem("order %s: no OrderSubmitted log in its receipt", s.hash)
		return common.Hash{}, false
	}
	lat := time.Duration(int64(tickUs)-s.sentUs) * time.Microsecond
	if res.landed == 0 || lat < res.tickMin {
		res.tickMin = lat
	}
	res.landed++
	res.tick.Record(lat)
	return id, true
}

// landing is the tick an intent admitted at nowUs is scheduled for.
func landing(nowUs, intervalUs int64) int64 { return (nowUs/intervalUs + 1) * intervalUs }

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// receiptJSON is the part of an eth_getTransactionReceipt answer the
// scenario reads.
type receiptJSON struct {
	Status      string       `json:"status"`
	BlockNumber *string      `json:"blockNumber"`
	BlockHash   *common.Hash `json:"blockHash"`
	Logs        []logJSON    `json:"logs"`
}

type logJSON struct {
	Topics []common.Hash `json:"topics"`
	TxHash common.Hash   `json:"transactionHash"`
}

// orderID is the order id of the receipt's OrderSubmitted log.
func (r *receiptJSON) orderID() (common.Hash, bool) {
	for _, l := range r.Logs {
		if len(l.Topics) >= 3 && l.Topics[0] == common.Hash(core.TopicOrderSubmitted) {
			return l.Topics[2], true
		}
	}
	return common.Hash{}, false
}

// rpcAnswer is one JSON-RPC answer with its result left raw.
type rpcAnswer struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// readReceipts reads the receipts of hashes with batch requests; an entry
// is nil while the receipt is not available.
func readReceipts(ctx context.Context, e *env, hashes []common.Hash) ([]*receiptJSON, error) {
	out := make([]*receiptJSON, len(hashes))
	for lo := 0; lo < len(hashes); lo += receiptBatch {
		hi := min(lo+receiptBatch, len(hashes))
		body := []byte{'['}
		for i := lo; i < hi; i++ {
			if i > lo {
				body = append(body, ',')
			}
			body = fmt.Appendf(body, `{"jsonrpc":"2.0","id":%d,"method":"eth_getTransactionReceipt","params":["%s"]}`, i, hashes[i].Hex())
		}
		body = append(body, ']')
		answer, err := probe(ctx, e.oursAddr, "", body)
		if err != nil {
			return nil, err
		}
		var answers []rpcAnswer
		if err := json.Unmarshal(answer, &answers); err != nil {
			return nil, fmt.Errorf("eth_getTransactionReceipt batch: %w: %s", err, clip(answer, 300))
		}
		for _, a := range answers {
			switch {
			case a.Error != nil:
				return nil, fmt.Errorf("eth_getTransactionReceipt: error %d %s", a.Error.Code, a.Error.Message)
			case a.ID < lo || a.ID >= hi:
				return nil, fmt.Errorf("eth_getTransactionReceipt batch: answer id %d outside %d..%d", a.ID, lo, hi-1)
			case bytes.Equal(a.Result, []byte("null")) || len(a.Result) == 0:
				continue
			}
			var rc receiptJSON
			if err := json.Unmarshal(a.Result, &rc); err != nil {
				return nil, fmt.Errorf("eth_getTransactionReceipt: %w: %s", err, clip(a.Result, 300))
			}
			out[a.ID] = &rc
		}
	}
	return out, nil
}

// getLogs runs one eth_getLogs on the orderbook's logs from fromSec on.
func getLogs(ctx context.Context, e *env, fromSec int64, topics [][]common.Hash) ([]logJSON, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x%x","address":"%s","topics":[`,
		fromSec, common.Address(core.OrderbookAddress).Hex())
	for i, alts := range topics {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('[')
		for j, t := range alts {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + t.Hex() + `"`)
		}
		b.WriteByte(']')
	}
	b.WriteString("]}]}")
	answer, err := probe(ctx, e.oursAddr, "", []byte(b.String()))
	if err != nil {
		return nil, err
	}
	var a rpcAnswer
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil, fmt.Errorf("eth_getLogs: %w: %s", err, clip(answer, 300))
	}
	if a.Error != nil {
		return nil, fmt.Errorf("eth_getLogs: error %d %s", a.Error.Code, a.Error.Message)
	}
	var logs []logJSON
	if err := json.Unmarshal(a.Result, &logs); err != nil {
		return nil, fmt.Errorf("eth_getLogs: %w: %s", err, clip(a.Result, 300))
	}
	return logs, nil
}

// awaitTicksAttested waits until every tick in ticks (by hash) shows its
// SolutionExecuted log: logs are found once attested, and a receipt's
// blockNumber appears as soon as its tick is durable, a little earlier.
func awaitTicksAttested(ctx context.Context, e *env, m *clob.MarketConfig, ticks map[common.Hash]bool, fromSec int64, give time.Time) error {
	for {
		logs, err := getLogs(ctx, e, fromSec, [][]common.Hash{{common.Hash(core.TopicSolutionExecuted)}, {common.Hash(m.ID)}})
		if err != nil {
			return err
		}
		seen := make(map[common.Hash]bool, len(logs))
		for _, l := range logs {
			seen[l.TxHash] = true
		}
		missing := 0
		for t := range ticks {
			if !seen[t] {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		if time.Now().After(give) {
			return fmt.Errorf("%d of %d ticks of the sampled orders have no attested SolutionExecuted log after %v", missing, len(ticks), landWait)
		}
		if err := sleep(ctx, landPoll); err != nil {
			return err
		}
	}
}

// filledOrders returns which of ids have an OrderFilled log on m's book.
func filledOrders(ctx context.Context, e *env, m *clob.MarketConfig, ids []common.Hash, fromSec int64) (map[common.Hash]bool, error) {
	filled := make(map[common.Hash]bool, len(ids))
	for lo := 0; lo < len(ids); lo += fillIDsPerCall {
		chunk := ids[lo:min(lo+fillIDsPerCall, len(ids))]
		logs, err := getLogs(ctx, e, fromSec, [][]common.Hash{{common.Hash(core.TopicOrderFilled)}, {common.Hash(m.ID)}, chunk})
		if err != nil {
			return nil, err
		}
		for _, l := range logs {
			if len(l.Topics) >= 3 {
				filled[l.Topics[2]] = true
			}
		}
	}
	return filled, nil
}

// followWallClock keeps a manual node clock at the wall time, moving it
// through admin_advanceTime every clockFollowEvery, so the auction ticks run
// as they would on the wall clock. It returns once the clock caught up;
// stop ends the following and reports its first error. Without a manual
// clock it does nothing.
func followWallClock(ctx context.Context, e *env) (stop func() error, err error) {
	if e.manual == nil {
		return func() error { return nil }, nil
	}
	advance := func(ctx context.Context) error {
		delta := time.Now().UnixMicro() - e.manual.NowMicros()
		if delta <= 0 {
			return nil
		}
		answer, err := probe(ctx, e.oursAddr, e.adminHeader(),
			fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"admin_advanceTime","params":["0x%x"]}`, delta))
		if err == nil && !bytes.Contains(answer, []byte(`"result":"0x`)) {
			err = fmt.Errorf("admin_advanceTime answered %s", clip(answer, 300))
		}
		return err
	}
	if err := advance(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var first atomic.Pointer[error]
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(clockFollowEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := advance(ctx); err != nil && ctx.Err() == nil {
					first.CompareAndSwap(nil, &err)
					return
				}
			}
		}
	}()
	return func() error {
		cancel()
		<-done
		if p := first.Load(); p != nil {
			return fmt.Errorf("following the wall clock: %w", *p)
		}
		return nil
	}, nil
}
