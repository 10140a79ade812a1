package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"fmt"
	"io"
	"math"
	"math/big"
	"runtime"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/ledgervenue/node/bench/load"
	"github.com/ledgervenue/node/bench/txgen"
	"github.com/ledgervenue/node/core"
)

// Transfer settings. Each transfer moves 1 wei to a sink at a fee cap of
// twice the base fee, so the node charges the base fee (no tip).
const (
	transferGas   = 21_000
	feeCapWei     = 2 * baseFeeWei
	warmupTxs     = 16 // per account, in the untimed warm-up run
	fundConnsMax  = 32 // connections used to send the deposits
	nativeTokenHx = "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE"
)

// runTransfers measures transfers/s on the node and relates them to the
// sender-recovery bound, measured before each timed run (the machine's load
// moves it) and taken as the median.
func runTransfers(ctx context.Context, w io.Writer, e *env, o *options) error {
	accounts := o.conns * o.pipeline
	fmt.Fprintf(w, "\n== transfer: %d accounts (conns x pipeline), each sending its transactions one after another\n", accounts)
	tFirst, err := measureRecovery(o.recoveryTxs, recoveryRuns)
	if err != nil {
		return err
	}
	bound := float64(runtime.GOMAXPROCS(0)) / tFirst.Seconds()
	warm, _, err := transferOnce(ctx, w, e, o, 0, warmupTxs, warmupDuration(o.duration))
	if err != nil {
		return err
	}
	perAccount := o.txs
	if perAccount == 0 {
		perAccount = sizeTxs(min(warm.Rate(), bound), o.duration, accounts)
	}
	recoveries := []time.Duration{tFirst}
	var results []*load.Result
	for i := range o.runs {
		t, err := measureRecovery(o.recoveryTxs, recoveryRuns)
		if err != nil {
			return err
		}
		recoveries = append(recoveries, t)
		r, groups, err := transferOnce(ctx, w, e, o, i+1, perAccount, o.duration)
		if err != nil {
			return err
		}
		printRun(w, fmt.Sprintf("run %d ours", i+1), r)
		printGroups(w, r, groups, perAccount)
		results = append(results, r)
		if o.txs == 0 && r.Exhausted { // the warm-up guessed low: size up
			perAccount = max(perAccount, sizeTxs(min(r.Rate(), bound), o.duration, accounts))
		}
	}
	s := summarize(results)
	printSummary(w, "median ours", &s)
	return reportBound(w, &s, recoveries, o.recoveryTxs)
}

func printGroups(w io.Writer, r *load.Result, groups int64, perAccount int) {
	if groups == 0 {
		return
	}
	fmt.Fprintf(w, "    %d transfers per account; %d group commits, %.1f inputs each, one per %v\n",
		perAccount, groups, float64(r.Done)/float64(groups), round(r.Elapsed/time.Duration(groups)))
}

// reportBound prints the recovery bound and fails on transfer errors.
func reportBound(w io.Writer, s *summary, recoveries []time.Duration, recoveryTxs int) error {
	slices.Sort(recoveries)
	t := recoveries[len(recoveries)/2]
	procs := runtime.GOMAXPROCS(0)
	bound := float64(procs) / t.Seconds()
	fmt.Fprintf(w, "  sender recovery %v/tx (ethtx.Sender on freshly decoded txs; median of %d measurements of %d x %d)\n",
		round(t), len(recoveries), recoveryRuns, recoveryTxs)
	fmt.Fprintf(w, "  recovery bound GOMAXPROCS/t_recovery = %d/%v = %.0f tx/s; achieved %.0f tx/s = %.3f of it\n",
		procs, round(t), bound, s.rate, s.rate/bound)
	if s.errors > 0 {
		return fmt.Errorf("%d transfer errors", s.errors)
	}
	return nil
}

// sizeTxs gives each account enough transfers to last a run at twice the
// rate seen in the warm-up; a run that still runs out ends early and says so.
func sizeTxs(rate float64, d time.Duration, accounts int) int {
	n := math.Ceil(2*rate*d.Seconds()/float64(accounts)) + 1
	return int(min(max(n, 1), txsMax))
}

// transferOnce funds fresh accounts (run index r), pre-signs perAccount
// transfers each, and times sending them. It returns the node's group
// commits during the timed part.
func transferOnce(ctx context.Context, w io.Writer, e *env, o *options, r, perAccount int, d time.Duration) (*load.Result, int64, error) {
	accounts := o.conns * o.pipeline
	keys, addrs := deriveKeys(o.seed, r, accounts)
	if err := fund(ctx, e.oursAddr, e.adminHeader(), addrs, perAccount); err != nil {
		return nil, 0, err
	}
	start := time.Now()
	bodies, err := signTransfers(keys, perAccount, sinkAddress(o.seed))
	if err != nil {
		return nil, 0, err
	}
	if r == 1 {
		fmt.Fprintf(w, "  signed %d transfers in %v (client side, before timing)\n", accounts*perAccount, round(time.Since(start)))
	}
	runtime.GC() // the signing garbage is the client's, not the run's
	groupsBefore := e.groups.Load()
	res, err := sendSequences(ctx, e, o, bodies, d, nil, hashAnswer)
	if err != nil {
		return nil, 0, err
	}
	return res, e.groups.Load() - groupsBefore, checkNonces(e, addrs, res)
}

// sendSequences sends bodies[account][nonce] to the node over o.conns
// connections with o.pipeline slots each: slot s of connection c is account
// c*o.pipeline+s, whose next body goes out only after the previous one was
// answered. sent, when set, is called just before each body is sent (on the
// connection's goroutine); check judges each answer.
func sendSequences(ctx context.Context, e *env, o *options, bodies [][][]byte, d time.Duration,
	sent func(account, nonce int), check func(status int, body []byte) bool) (*load.Result, error) {
	return load.Run(ctx, load.Config{Addr: e.oursAddr, Conns: o.conns, Pipeline: o.pipeline,
		Requests: o.requests, Duration: d,
		Next: func(conn int, seq uint64) []byte {
			account, nonce := conn*o.pipeline+int(seq%uint64(o.pipeline)), seq/uint64(o.pipeline)
			if account >= len(bodies) || nonce >= uint64(len(bodies[account])) {
				return nil
			}
			if sent != nil {
				sent(account, int(nonce))
			}
			return bodies[account][nonce]
		},
		Check: check})
}

// hashAnswer accepts a JSON-RPC answer carrying a hash: what
// eth_sendRawTransaction answers to an admitted transaction.
func hashAnswer(status int, body []byte) bool {
	return status == 200 && bytes.Contains(body, []byte(`"result":"0x`))
}

// checkNonces pairs the client's count with the ledger's: the accounts'
// nonces must add up to the transactions answered with a hash.
func checkNonces(e *env, addrs []common.Address, r *load.Result) error {
	var sum uint64
	for _, a := range addrs {
		sum += e.node.Nonce(core.Address(a))
	}
	if ok := uint64(r.Done - r.Errors); sum != ok {
		return fmt.Errorf("ledger nonces add up to %d, but %d transactions were answered with a hash", sum, ok)
	}
	return nil
}

// deriveKeys returns count keys derived from seed and the run index.
func deriveKeys(seed string, run, count int) ([]*ecdsa.PrivateKey, []common.Address) {
	return txgen.DeriveKeys("loadgen key", seed, run, count)
}

func sinkAddress(seed string) common.Address {
	return common.BytesToAddress(crypto.Keccak256([]byte("loadgen sink"), []byte(seed)))
}

// fund deposits, for each address, the cost of perAccount transfers at the
// full fee cap, through admin_deposit of the native token on the node at
// addr (host:port) authorized by header (see env.adminHeader).
func fund(ctx context.Context, addr, header string, addrs []common.Address, perAccount int) error {
	amount := new(big.Int).Mul(big.NewInt(int64(perAccount)), big.NewInt(transferGas*feeCapWei+1))
	ds := make([]deposit, len(addrs))
	for i, a := range addrs {
		ds[i] = deposit{token: nativeTokenHx, to: a, amount: amount}
	}
	return depositAll(ctx, addr, header, ds)
}

// deposit is one admin_deposit: amount wei of token (hex address) to an
// account.
type deposit struct {
	token  string
	to     common.Address
	amount *big.Int
}

// depositAll sends the deposits to the node at addr (host:port), with the
// admin header lines header, over up to fundConnsMax connections and fails
// unless every one was answered with a tx_hash.
func depositAll(ctx context.Context, addr, header string, ds []deposit) error {
	bodies := make([][]byte, len(ds))
	for i, d := range ds {
		bodies[i] = []byte(`{"jsonrpc":"2.0","id":1,"method":"admin_deposit","params":[{"token":"` + d.token +
			`","to":"` + d.to.Hex() + `","amount":"0x` + d.amount.Text(16) + `"}]}`)
	}
	conns := min(len(bodies), fundConnsMax)
	r, err := load.Run(ctx, load.Config{Addr: addr, Conns: conns, Pipeline: 1, Requests: int64(len(bodies)),
		Duration: time.Minute, Header: header,
		Next: func(conn int, seq uint64) []byte {
			if i := int(seq)*conns + conn; i < len(bodies) {
				return bodies[i]
			}
			return nil
		},
		Check: func(status int, body []byte) bool { return status == 200 && bytes.Contains(body, []byte(`"tx_hash"`)) }})
	switch {
	case err != nil:
		return err
	case r.Done != int64(len(bodies)) || r.Errors != 0:
		return fmt.Errorf("funding: %d of %d deposits answered, %d errors (%v)", r.Done, len(bodies), r.Errors, r.FirstError)
	}
	return nil
}

// signTransfers returns, per key, perAccount eth_sendRawTransaction bodies
// with nonces 0, 1, ...; the keys are signed in parallel on every core.
func signTransfers(keys []*ecdsa.PrivateKey, perAccount int, to common.Address) ([][][]byte, error) {
	return signAll(keys, perAccount, func(_ int, key *ecdsa.PrivateKey, signer types.Signer, nonce uint64) ([]byte, error) {
		return signedTransfer(key, signer, nonce, to)
	})
}

// signFunc returns the raw signed transaction with the given nonce of
// account (an index into the keys).
type signFunc func(account int, key *ecdsa.PrivateKey, signer types.Signer, nonce uint64) ([]byte, error)

// signAll returns, per key, perAccount eth_sendRawTransaction bodies of the
// transactions sign makes, with nonces 0, 1, ...; the keys are signed in
// parallel on every core.
func signAll(keys []*ecdsa.PrivateKey, perAccount int, sign signFunc) ([][][]byte, error) {
	bodies := make([][][]byte, len(keys))
	err := txgen.Parallel(len(keys), func(k int) (err error) {
		bodies[k], err = signAccount(k, keys[k], perAccount, sign)
		return err
	})
	return bodies, err
}

func signAccount(account int, key *ecdsa.PrivateKey, count int, sign signFunc) ([][]byte, error) {
	signer := types.LatestSignerForChainID(big.NewInt(chainID))
	out := make([][]byte, count)
	for nonce := range out {
		raw, err := sign(account, key, signer, uint64(nonce))
		if err != nil {
			return nil, err
		}
		out[nonce] = txgen.SendRawBody(raw)
	}
	return out, nil
}

// signedTransfer returns the raw EIP-1559 transfer of 1 wei to `to`.
func signedTransfer(key *ecdsa.PrivateKey, signer types.Signer, nonce uint64, to common.Address) ([]byte, error) {
	tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: nonce, GasTipCap: new(big.Int), GasFeeCap: big.NewInt(feeCapWei),
		Gas: transferGas, To: &to, Value: big.NewInt(1),
	})
	if err != nil {
		return nil, fmt.Errorf("cannot sign a transfer: %w", err)
	}
	return tx.MarshalBinary()
}
