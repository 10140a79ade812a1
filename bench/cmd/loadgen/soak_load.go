package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/ledgervenue/node/bench/txgen"
)

// Bounds of the soak client: what it holds does not grow with the run.
const (
	// aheadMax bounds the signed transfers waiting in all accounts' queues
	// together, aheadPerAccountMax one account's queue. About 330 bytes
	// each: at most about 22 MB.
	aheadMax           = 1 << 16
	aheadPerAccountMax = 128
	// answerKindsMax bounds the distinct refusal and error kinds counted;
	// the rest are counted under answerKindOther.
	answerKindsMax  = 32
	answerKindOther = "(other kinds)"
	// signerIdle is how long a signer sleeps when every queue it fills is
	// full.
	signerIdle = time.Millisecond
)

// soakAccount is one sending account. queue is filled by exactly one signer
// goroutine, in nonce order; pending and resend belong to the load client's
// goroutine of the account's connection (Next and Check both run there).
type soakAccount struct {
	key   *ecdsa.PrivateKey
	queue chan []byte
	nonce uint64 // next nonce to sign; the signer's
	// pending is the body sent last; resend says it was refused and goes
	// out again, with the same nonce.
	pending []byte
	resend  bool
}

// soakSender feeds the load client transfers signed on the fly and judges
// the answers. Safe for the load client's concurrent connections, because
// account a is only touched by connection a/pipeline.
type soakSender struct {
	accounts []soakAccount
	pipeline int
	to       common.Address
	cancel   context.CancelFunc // ends the run at the first error
	acked    atomic.Int64
	refusals answerCounts
	errors   answerCounts
	// Signers' totals, valid after wait.
	signers   sync.WaitGroup
	primed    sync.WaitGroup
	signed    atomic.Int64
	signCPUNs atomic.Int64
	signErr   atomic.Pointer[error]
}

func newSoakSender(keys []*ecdsa.PrivateKey, pipeline int, to common.Address, cancel context.CancelFunc) *soakSender {
	depth := min(max(aheadMax/len(keys), 2), aheadPerAccountMax)
	s := &soakSender{accounts: make([]soakAccount, len(keys)), pipeline: pipeline, to: to, cancel: cancel}
	for i, k := range keys {
		s.accounts[i] = soakAccount{key: k, queue: make(chan []byte, depth)}
	}
	return s
}

// startSigners starts workers signer goroutines, each filling the queues of
// the accounts i with i%workers == its index, and returns once every queue
// was full once. They stop when ctx ends; wait for them with waitSigners.
func (s *soakSender) startSigners(ctx context.Context, workers int) {
	workers = min(workers, len(s.accounts))
	s.primed.Add(workers)
	for wi := range workers {
		s.signers.Go(func() { s.sign(ctx, wi, workers) })
	}
	s.primed.Wait()
}

// sign is one signer: it tops up its accounts' queues and sleeps while all
// are full. It runs on its own OS thread so that the thread's CPU time is
// the signing cost.
func (s *soakSender) sign(ctx context.Context, wi, workers int) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpuStart := threadCPU()
	defer func() { s.signCPUNs.Add(int64(threadCPU() - cpuStart)) }()
	signer := types.LatestSignerForChainID(big.NewInt(chainID))
	primed := false
	defer func() {
		if !primed { // stopped before the first pass: startSigners still waits
			s.primed.Done()
		}
	}()
	for ctx.Err() == nil {
		signed := int64(0)
		for i := wi; i < len(s.accounts); i += workers {
			a := &s.accounts[i]
			for len(a.queue) < cap(a.queue) { // only this goroutine sends on a.queue
				raw, err := signedTransfer(a.key, signer, a.nonce, s.to)
				if err != nil {
					s.signErr.CompareAndSwap(nil, &err)
					s.cancel()
					return
				}
				a.queue <- appendSoakBody(make([]byte, 0, soakBodyBytes(len(raw))), i, raw)
				a.nonce++
				signed++
			}
		}
		s.signed.Add(signed)
		if !primed {
			primed = true
			s.primed.Done()
		}
		if signed == 0 {
			time.Sleep(signerIdle)
		}
	}
}

// waitSigners waits for the signers to stop (the run's context ended) and
// returns the first signing error.
func (s *soakSender) waitSigners() error {
	s.signers.Wait()
	if p := s.signErr.Load(); p != nil {
		return *p
	}
	return nil
}

// The eth_sendRawTransaction body of a soak transfer; the id is the
// account's index, so an answer tells whose transfer it answers.
const soakBodyPrefix = `{"jsonrpc":"2.0","id":`

const soakBodyMiddle = `,"method":"eth_sendRawTransaction","params":["0x`

func soakBodyBytes(rawBytes int) int {
	return len(soakBodyPrefix) + 20 + len(soakBodyMiddle) + 2*rawBytes + len(txgen.SendRawSuffix)
}

func appendSoakBody(dst []byte, account int, raw []byte) []byte {
	dst = append(dst, soakBodyPrefix...)
	dst = strconv.AppendInt(dst, int64(account), 10)
	dst = append(dst, soakBodyMiddle...)
	dst = hex.AppendEncode(dst, raw)
	return append(dst, txgen.SendRawSuffix...)
}

// next is the load client's Next: account conn*pipeline+seq%pipeline sends
// its refused transfer again, or its next signed one. It waits for the
// signers when the queue is empty: then signing, not the node, is the
// bound, and the report's signing CPU shows it.
func (s *soakSender) next(ctx context.Context) func(conn int, seq uint64) []byte {
	return func(conn int, seq uint64) []byte {
		a := &s.accounts[conn*s.pipeline+int(seq%uint64(s.pipeline))]
		if a.resend {
			a.resend = false
			return a.pending
		}
		select {
		case a.pending = <-a.queue:
			return a.pending
		case <-ctx.Done():
			return nil
		}
	}
}

// check is the load client's Check: it counts an answer carrying a hash as
// acknowledged; a refusal (the node says it is overloaded) marks the
// account's transfer for sending again; anything else is an error, counted
// by kind, and ends the run, because the account's nonces are out of step
// from there on. A refusal without a JSON-RPC id (a bare HTTP 503, say) is
// an error too: nothing tells whose transfer to send again.
func (s *soakSender) check(status int, body []byte) bool {
	if status == 200 && bytes.Contains(body, []byte(`"result":"0x`)) {
		s.acked.Add(1)
		return true
	}
	kind, refusal := classifyAnswer(status, body)
	if account, ok := answerID(body); refusal && ok && account < len(s.accounts) {
		s.accounts[account].resend = true
		s.refusals.add(kind, body)
		return false
	}
	s.errors.add(kind, body)
	s.cancel()
	return false
}

// classifyAnswer names an answer that is not an acknowledgement, and says
// whether it is a refusal: HTTP 429 or 503, or a JSON-RPC error saying the
// node is overloaded (ledgerd answers -32603 "node overloaded: ..." while
// too many inputs await durability).
func classifyAnswer(status int, body []byte) (kind string, refusal bool) {
	if status != 200 {
		return "HTTP " + strconv.Itoa(status), status == 429 || status == 503
	}
	var a rpcAnswer
	if err := json.Unmarshal(body, &a); err != nil || a.Error == nil {
		return "unexpected answer", false
	}
	kind = strconv.Itoa(a.Error.Code) + " " + a.Error.Message
	if len(a.Error.Data) > 0 {
		kind += ": " + strings.Trim(string(a.Error.Data), `"`)
	}
	kind = clip([]byte(kind), 120)
	return kind, strings.Contains(strings.ToLower(kind), "overloaded")
}

// answerID returns the numeric id of a JSON-RPC answer.
func answerID(body []byte) (int, bool) {
	_, rest, ok := bytes.Cut(body, []byte(`"id":`))
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(rest) && end < 10 && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	id, err := strconv.Atoi(string(rest[:end]))
	return id, err == nil
}

// answerCounts counts answers by kind, at most answerKindsMax kinds, and
// keeps the first answer's body. Safe for concurrent use.
type answerCounts struct {
	mu     sync.Mutex
	counts map[string]int64
	total  int64
	first  string
}

func (c *answerCounts) add(kind string, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = make(map[string]int64)
		c.first = clip(body, 300)
	}
	if _, ok := c.counts[kind]; !ok && len(c.counts) >= answerKindsMax {
		kind = answerKindOther
	}
	c.counts[kind]++
	c.total++
}

// String lists the kinds, most frequent first, e.g. `3 × -32603 ...`.
func (c *answerCounts) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total == 0 {
		return "0"
	}
	kinds := make([]string, 0, len(c.counts))
	for k := range c.counts {
		kinds = append(kinds, k)
	}
	sortByCount(kinds, c.counts)
	var b strings.Builder
	fmt.Fprintf(&b, "%d:", c.total)
	for _, k := range kinds {
		fmt.Fprintf(&b, " %d × %s;", c.counts[k], k)
	}
	return strings.TrimSuffix(b.String(), ";")
}

func sortByCount(kinds []string, counts map[string]int64) {
	for i := 1; i < len(kinds); i++ { // at most answerKindsMax+1: insertion sort
		for j := i; j > 0 && (counts[kinds[j]] > counts[kinds[j-1]] ||
			counts[kinds[j]] == counts[kinds[j-1]] && kinds[j] < kinds[j-1]); j-- {
			kinds[j], kinds[j-1] = kinds[j-1], kinds[j]
		}
	}
}

// soakSample is one reading of the node during a soak run.
type soakSample struct {
	elapsed  time.Duration // since the sampler started
	acked    int64         // transfers acknowledged so far
	rssBytes int64         // the node's VmRSS
	anonRSS  int64         // its RssAnon: VmRSS without mapped files
	disk     diskUsage     // of the datadir
}

// sampler reads the node every interval and prints a progress line each
// time. Its samples are bounded by options.check: duration/sample is at
// most samplesMax.
type sampler struct {
	w        io.Writer
	pid      int
	dir      string
	acked    *atomic.Int64
	start    time.Time
	samples  []soakSample
	err      error // the first failed reading
	done     chan struct{}
	finished chan struct{}
}

// startSampler takes the first sample at once, then one every interval
// until stop.
func startSampler(w io.Writer, pid int, dir string, acked *atomic.Int64, interval time.Duration) *sampler {
	s := &sampler{w: w, pid: pid, dir: dir, acked: acked, start: time.Now(),
		done: make(chan struct{}), finished: make(chan struct{})}
	fmt.Fprintf(w, "  %9s %11s %9s %9s %9s %9s %9s\n", "elapsed s", "acked", "tx/s", "RSS MB", "anon MB", "disk MB", "files MB")
	s.take()
	go func() {
		defer close(s.finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.take()
			case <-s.done:
				return
			}
		}
	}()
	return s
}

// stop ends the ticks, takes the last sample and returns them all.
func (s *sampler) stop() ([]soakSample, error) {
	close(s.done)
	<-s.finished
	s.take()
	return s.samples, s.err
}

func (s *sampler) take() {
	acked := s.acked.Load()
	rss, anon, err := processRSS(s.pid)
	if err != nil && s.err == nil {
		s.err = err
	}
	disk, err := dirUsage(s.dir)
	if err != nil && s.err == nil {
		s.err = err
	}
	cur := soakSample{elapsed: time.Since(s.start), acked: acked, rssBytes: rss, anonRSS: anon, disk: disk}
	rate := 0.0
	if n := len(s.samples); n > 0 {
		prev := s.samples[n-1]
		rate = float64(cur.acked-prev.acked) / (cur.elapsed - prev.elapsed).Seconds()
	}
	s.samples = append(s.samples, cur)
	fmt.Fprintf(s.w, "  %9.1f %11d %9.0f %9.1f %9.1f %9.1f %9.1f\n", cur.elapsed.Seconds(), cur.acked, rate,
		megabytes(cur.rssBytes), megabytes(cur.anonRSS), megabytes(cur.disk.allocated), megabytes(cur.disk.apparent))
}

// diskUsage is the size of a directory's regular files, in bytes.
type diskUsage struct {
	// allocated counts the blocks the files take on disk, apparent their
	// sizes. Badger preallocates its memtable and value-log files and
	// truncates them on close, so while the node runs apparent moves in
	// steps of the preallocation and allocated follows what was written.
	allocated, apparent int64
}

// dirUsage sums the sizes of the regular files under dir.
func dirUsage(dir string) (diskUsage, error) {
	var sum diskUsage
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // removed between listing and reading: the node compacts
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				sum.allocated += allocatedBytes(info)
				sum.apparent += info.Size()
			}
		}
		return nil
	})
	if err != nil {
		return diskUsage{}, fmt.Errorf("cannot measure the datadir: %w", err)
	}
	return sum, nil
}

func megabytes(b int64) float64 { return float64(b) / (1 << 20) }
