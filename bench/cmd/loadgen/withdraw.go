package main

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"io"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/bench/load"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/node"
)

// The withdraw scenario: bridge withdrawals through the node, each account
// sending its pre-signed withdraw transactions one after another, in runs
// that alternate with plain transfer runs of the same accounts and length,
// so the ratio withdrawals/transfers compares two rates of one machine
// state. Each withdrawal takes one unit of the native token (1e18 wei: the
// dev configuration's minimum, 1e6 units of 6 decimals) to a fixed
// recipient. A sample of them (-fill-sample) is followed until claimable:
// the time from its batch (the outcome's timestamp_us) to the moment the
// node reads it claimable, by polling node.Withdrawal every
// withdrawPollEvery, which bounds the measurement's resolution.
const (
	withdrawUnitWei   = 1_000_000_000_000_000_000
	withdrawPollEvery = time.Millisecond
	// withdrawSettleMax is how long a run waits after its last send for the
	// sampled withdrawals to become claimable.
	withdrawSettleMax = 10 * time.Second
	// withdrawDeadlineUs is how far ahead the withdrawals' deadline lies:
	// they execute in the first batch after admission, so it only has to
	// outlast the run (an hour, aligned to the auction interval).
	withdrawDeadlineUs = 3600_000_000
)

// runWithdrawals measures withdrawals/s and the batch→claimable latency,
// alternating with transfer runs.
func runWithdrawals(ctx context.Context, w io.Writer, e *env, o *options) error {
	accounts := o.conns * o.pipeline
	fmt.Fprintf(w, "\n== withdraw: %d accounts (conns x pipeline), each sending its withdrawals (1 native unit) one after another; "+
		"each run followed by a transfer run of the same size\n", accounts)
	stop, err := followWallClock(ctx, e)
	if err != nil {
		return err
	}
	err = withdrawRuns(ctx, w, e, o)
	if serr := stop(); err == nil && serr != nil {
		err = serr
	}
	return err
}

func withdrawRuns(ctx context.Context, w io.Writer, e *env, o *options) error {
	accounts := o.conns * o.pipeline
	warm, _, err := withdrawOnce(ctx, e, o, 0, warmupTxs, warmupDuration(o.duration), 0)
	if err != nil {
		return err
	}
	perAccount := o.txs
	if perAccount == 0 {
		perAccount = sizeTxs(warm.Rate(), o.duration, accounts)
	}
	var withdrawals, transfers []*load.Result
	var claimable load.Histogram
	var missing int
	for i := range o.runs {
		r, lat, err := withdrawOnce(ctx, e, o, i+1, perAccount, o.duration, o.fillSample)
		if err != nil {
			return err
		}
		printRun(w, fmt.Sprintf("run %d withdraw", i+1), r)
		fmt.Fprintf(w, "    batch→claimable of %d sampled: p50 %v  p99 %v  max %v; %d refused by their batch, %d not claimable within %v\n",
			lat.hist.Count(), round(lat.hist.Quantile(0.5)), round(lat.hist.Quantile(0.99)), round(lat.hist.Max()),
			lat.refused, lat.missing, withdrawSettleMax)
		claimable.Merge(&lat.hist)
		missing += lat.missing
		withdrawals = append(withdrawals, r)
		t, _, err := transferOnce(ctx, w, e, o, i+1, perAccount, o.duration)
		if err != nil {
			return err
		}
		printRun(w, fmt.Sprintf("run %d transfer", i+1), t)
		transfers = append(transfers, t)
	}
	ws, ts := summarize(withdrawals), summarize(transfers)
	printSummary(w, "median withdraw", &ws)
	printSummary(w, "median transfer", &ts)
	fmt.Fprintf(w, "  withdraw/transfer median rate: %.0f / %.0f = %.3f\n", ws.rate, ts.rate, ws.rate/ts.rate)
	fmt.Fprintf(w, "  batch→claimable over all runs (n %d): p50 %v  p99 %v  max %v\n",
		claimable.Count(), round(claimable.Quantile(0.5)), round(claimable.Quantile(0.99)), round(claimable.Max()))
	switch {
	case ws.errors > 0 || ts.errors > 0:
		return fmt.Errorf("%d withdrawal and %d transfer errors", ws.errors, ts.errors)
	case missing > 0:
		return fmt.Errorf("%d sampled withdrawals not claimable within %v", missing, withdrawSettleMax)
	}
	return nil
}

// claimLatency is what a run's sampled withdrawals took from their batch to
// claimable.
type claimLatency struct {
	hist load.Histogram
	// refused counts the sampled withdrawals whose batch refused them
	// (insufficient_balance, not_included: more than a batch executes).
	refused int
	missing int
}

// withdrawOnce funds fresh accounts (run index r) with perAccount units,
// pre-signs perAccount withdrawals each and times sending them; it follows
// up to sample of them until claimable.
func withdrawOnce(ctx context.Context, e *env, o *options, r, perAccount int, d time.Duration, sample int) (*load.Result, *claimLatency, error) {
	accounts := o.conns * o.pipeline
	keys, addrs := deriveKeys(o.seed+" withdraw", r, accounts)
	ds := make([]deposit, len(addrs))
	amount := new(big.Int).Mul(big.NewInt(int64(perAccount)), big.NewInt(withdrawUnitWei))
	for i, a := range addrs {
		ds[i] = deposit{token: nativeTokenHx, to: a, amount: amount}
	}
	if err := depositAll(ctx, e.oursAddr, e.adminHeader(), ds); err != nil {
		return nil, nil, err
	}
	now := max(e.node.PastPerfectTime(), time.Now().UnixMicro())
	deadline := uint64((now/clob.TransferIntervalUs)*clob.TransferIntervalUs + withdrawDeadlineUs)
	data := core.AppendWithdrawCall(nil, core.NativeToken, core.Address(sinkAddress(o.seed)), uint256.NewInt(withdrawUnitWei), deadline)
	hashes := make([][]common.Hash, accounts)
	for i := range hashes {
		hashes[i] = make([]common.Hash, perAccount)
	}
	bodies, err := signAll(keys, perAccount, func(account int, key *ecdsa.PrivateKey, signer types.Signer, nonce uint64) ([]byte, error) {
		to := common.Address(core.BridgeAddress)
		tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{ChainID: big.NewInt(chainID), Nonce: nonce,
			GasTipCap: new(big.Int), GasFeeCap: big.NewInt(feeCapWei), Gas: transferGas, To: &to, Data: data})
		if err != nil {
			return nil, fmt.Errorf("cannot sign a withdrawal: %w", err)
		}
		hashes[account][nonce] = tx.Hash()
		return tx.MarshalBinary()
	})
	if err != nil {
		return nil, nil, err
	}
	every := max(1, accounts*perAccount/max(sample, 1))
	f := newClaimFollower(e.node)
	var sent int
	var refusal string // the first refused answer
	var mu sync.Mutex
	res, err := sendSequences(ctx, e, o, bodies, d, func(account, nonce int) {
		mu.Lock()
		defer mu.Unlock()
		if sent++; sample > 0 && sent%every == 0 {
			f.follow(core.Hash(hashes[account][nonce]))
		}
	}, func(status int, body []byte) bool {
		ok := hashAnswer(status, body)
		mu.Lock()
		defer mu.Unlock()
		if !ok && refusal == "" {
			refusal = fmt.Sprintf("HTTP %d %s", status, clip(body, 300))
		}
		return ok
	})
	if err != nil {
		f.stop()
		return nil, nil, err
	}
	if res.Errors > 0 {
		f.stop()
		return nil, nil, fmt.Errorf("%d of %d withdrawals refused, the first: %s (%v)", res.Errors, res.Done, refusal, res.FirstError)
	}
	lat := f.wait(withdrawSettleMax)
	return res, lat, checkNonces(e, addrs, res)
}

// claimFollower polls the followed withdrawals until each is claimable.
type claimFollower struct {
	n    *node.Node
	mu   sync.Mutex
	open []core.Hash // followed, not yet claimable (in send order)
	lat  claimLatency
	quit chan struct{}
	done chan struct{}
}

func newClaimFollower(n *node.Node) *claimFollower {
	f := &claimFollower{n: n, quit: make(chan struct{}), done: make(chan struct{})}
	go f.run()
	return f
}

func (f *claimFollower) follow(h core.Hash) {
	f.mu.Lock()
	f.open = append(f.open, h)
	f.mu.Unlock()
}

func (f *claimFollower) run() {
	defer close(f.done)
	t := time.NewTicker(withdrawPollEvery)
	defer t.Stop()
	var open []core.Hash
	for {
		select {
		case <-f.quit:
			return
		case <-t.C:
		}
		f.mu.Lock()
		open = append(open[:0], f.open...)
		f.mu.Unlock()
		done := make(map[core.Hash]bool)
		for _, h := range open {
			wd, found, err := f.n.Withdrawal(h)
			if err != nil || !found || wd.Status == node.StatusPending {
				continue
			}
			f.mu.Lock()
			if wd.Status == node.StatusClaimable {
				f.lat.hist.Record(time.Duration(time.Now().UnixMicro()-wd.Row.Out.TickUs) * time.Microsecond)
			} else {
				f.lat.refused++
			}
			f.mu.Unlock()
			done[h] = true
		}
		f.mu.Lock()
		f.open = slices.DeleteFunc(f.open, func(h core.Hash) bool { return done[h] })
		f.mu.Unlock()
	}
}

// wait lets the follower finish for up to max, stops it and returns what it
// measured; what is still open counts as missing.
func (f *claimFollower) wait(limit time.Duration) *claimLatency {
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		f.mu.Lock()
		left := len(f.open)
		f.mu.Unlock()
		if left == 0 {
			break
		}
		time.Sleep(10 * withdrawPollEvery)
	}
	f.stop()
	f.lat.missing = len(f.open)
	return &f.lat
}

func (f *claimFollower) stop() {
	close(f.quit)
	<-f.done
}
