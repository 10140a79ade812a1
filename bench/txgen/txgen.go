// Package txgen is what the load tools (bench/cmd/loadgen, cmd/ledger-bench)
// share to prepare signed transactions ahead of a run: sender keys derived
// from a seed, eth_sendRawTransaction request bodies, and work spread over
// every core. Derivation is deterministic: the same domain, seed, run and
// index give the same key.
package txgen

import (
	"crypto/ecdsa"
	"encoding/binary"
	"encoding/hex"
	"runtime"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// The eth_sendRawTransaction request around the hex of the raw transaction.
const (
	SendRawPrefix = `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x`
	SendRawSuffix = `"]}`
)

// SendRawBody returns the eth_sendRawTransaction request of raw.
func SendRawBody(raw []byte) []byte {
	b := make([]byte, 0, len(SendRawPrefix)+2*len(raw)+len(SendRawSuffix))
	b = append(b, SendRawPrefix...)
	b = hex.AppendEncode(b, raw)
	return append(b, SendRawSuffix...)
}

// DeriveKeys returns count keys, and their addresses, derived from domain
// (the tool's label), seed and run: key i is keccak256(domain ‖ seed ‖
// run ‖ i ‖ attempt), big-endian u64s, at the first attempt that is a
// valid key.
func DeriveKeys(domain, seed string, run, count int) ([]*ecdsa.PrivateKey, []common.Address) {
	keys := make([]*ecdsa.PrivateKey, count)
	addrs := make([]common.Address, count)
	for i := range keys {
		keys[i] = deriveKey(domain, seed, uint64(run), uint64(i))
		addrs[i] = crypto.PubkeyToAddress(keys[i].PublicKey)
	}
	return keys, addrs
}

func deriveKey(domain, seed string, run, index uint64) *ecdsa.PrivateKey {
	var b [24]byte
	binary.BigEndian.PutUint64(b[:8], run)
	binary.BigEndian.PutUint64(b[8:16], index)
	for attempt := uint64(0); ; attempt++ {
		binary.BigEndian.PutUint64(b[16:], attempt)
		// A hash is a valid key unless it is zero or >= n: odds about 2^-128.
		if k, err := crypto.ToECDSA(crypto.Keccak256([]byte(domain), []byte(seed), b[:])); err == nil {
			return k
		}
	}
}

// Parallel runs f(0..n-1) on GOMAXPROCS goroutines, worker w taking w,
// w+workers, …, and returns the first error; a worker stops at its first.
func Parallel(n int, f func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n && errs[w] == nil; i += workers {
				errs[w] = f(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
