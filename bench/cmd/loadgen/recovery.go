package main

import (
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/ledgervenue/node/codec/ethtx"
	"github.com/ledgervenue/node/net/node"
)

// Sizing of the recovery measurement: recoveryRuns timed passes over
// recoveryTxs transactions.
const (
	recoveryTxs  = 1000
	recoveryRuns = 7
)

// measureRecovery returns the median time of one ethtx.Sender call on
// freshly decoded transactions (decoding is not timed): what the node pays
// per transfer on the event loops, and so what bounds transfers/s.
func measureRecovery(count, runs int) (time.Duration, error) {
	if count < 1 || runs < 1 {
		panic("BUG: measureRecovery needs at least one transaction and one run")
	}
	raws, from, err := recoverySamples(count)
	if err != nil {
		return 0, err
	}
	perTx := make([]time.Duration, runs)
	txs := make([]*types.Transaction, count)
	for r := range perTx {
		for i, raw := range raws {
			if txs[i], err = ethtx.Decode(raw); err != nil {
				return 0, fmt.Errorf("cannot decode a sample transaction: %w", err)
			}
		}
		start := time.Now()
		for i, tx := range txs {
			if a, err := ethtx.Sender(tx); err != nil || a != from[i] {
				return 0, fmt.Errorf("sample %d: recovered %v, %v; want %v", i, a, err, from[i])
			}
		}
		perTx[r] = time.Since(start) / time.Duration(count)
	}
	slices.Sort(perTx)
	return perTx[runs/2], nil
}

// recoverySamples signs count transfers with the dev keys in turn.
func recoverySamples(count int) (raws [][]byte, from []common.Address, err error) {
	keys := make([]*ecdsa.PrivateKey, len(node.DevKeys))
	for i, hexKey := range node.DevKeys {
		if keys[i], err = crypto.HexToECDSA(hexKey); err != nil {
			return nil, nil, err
		}
	}
	signer := types.LatestSignerForChainID(big.NewInt(chainID))
	to := sinkAddress("recovery")
	for i := range count {
		k := keys[i%len(keys)]
		raw, err := signedTransfer(k, signer, uint64(i), to)
		if err != nil {
			return nil, nil, err
		}
		raws = append(raws, raw)
		from = append(from, crypto.PubkeyToAddress(k.PublicKey))
	}
	return raws, from, nil
}
