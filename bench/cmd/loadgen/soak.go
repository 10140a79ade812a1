package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/ledgervenue/node/bench/load"
	"github.com/ledgervenue/node/bench/proc"
)

// Bounds of the soak scenario.
const (
	// soakDurationMax replaces durationMax for the soak scenario only.
	soakDurationMax = time.Hour
	sampleMin       = 100 * time.Millisecond
	// samplesMax bounds duration/sample, and so the samples kept.
	samplesMax  = 100_000
	soakBinsMax = 2
	// soakAccountsMax bounds -conns x -pipeline: the accounts funded, each
	// with a queue of transfers signed ahead.
	soakAccountsMax = 1 << 14
	warmupMax       = 0.9
	// soakFundedTxs is how many transfers each account is funded for: more
	// than any run can send.
	soakFundedTxs = 1 << 30
	// restartWriteTimeout bounds the wait for the first write after the
	// restart.
	restartWriteTimeout = 30 * time.Second
	// stopKillAfter is when proc.Ledgerd.Stop gives up on SIGTERM.
	stopKillAfter = 10 * time.Second
)

// checkSoak checks the soak scenario's flags: its own duration bound, the
// sampling (a bounded count of samples) and the binaries.
func (o *options) checkSoak() error {
	bins := 0
	if o.soakBins != "" {
		bins = len(strings.Split(o.soakBins, ","))
	}
	switch {
	case o.duration <= 0 || o.duration > soakDurationMax:
		return fmt.Errorf("-duration must be in (0, %v] for soak, got %v", soakDurationMax, o.duration)
	case o.sample < sampleMin || o.sample > o.duration:
		return fmt.Errorf("-sample must be in [%v, -duration], got %v", sampleMin, o.sample)
	case o.duration/o.sample > samplesMax:
		return fmt.Errorf("-duration/-sample must be at most %d, got %v/%v", samplesMax, o.duration, o.sample)
	case !(o.warmup >= 0 && o.warmup <= warmupMax):
		return fmt.Errorf("-warmup must be in [0, %v], got %v", warmupMax, o.warmup)
	case bins > soakBinsMax || slices.Contains(strings.Split(o.soakBins, ","), "") && bins > 0:
		return fmt.Errorf("-soak-bin takes 1 or %d binaries, comma-separated, got %q", soakBinsMax, o.soakBins)
	case o.conns < 1 || o.conns > load.ConnsMax || o.pipeline < 1 || o.pipeline > load.PipelineMax:
		return fmt.Errorf("-conns must be in 1..%d and -pipeline in 1..%d, got %d and %d", load.ConnsMax, load.PipelineMax, o.conns, o.pipeline)
	case o.conns*o.pipeline > soakAccountsMax:
		return fmt.Errorf("soak: -conns x -pipeline (the sending accounts) must be at most %d, got %d", soakAccountsMax, o.conns*o.pipeline)
	}
	return nil
}

// soakReport is what one binary's soak run measured.
type soakReport struct {
	label, bin string
	samples    []soakSample
	elapsed    time.Duration // the load client's, from its start to the last answer
	acked      int64
	refusals   string // by kind, e.g. "0" or "3: 3 × -32603 ..."
	errors     string
	errorCount int64
	unanswered int64
	endedEarly string // why the run ended before -duration, if it did
	meanRate   float64
	medianRate float64 // of the per-sample-interval rates
	intervals  int     // the rates the median is of
	// slope is the least-squares slope of RSS over acked transfers, bytes
	// per transfer, over slopeSamples samples after the warm-up; NaN when
	// fewer than two samples with different counts were taken.
	slope        float64
	anonSlope    float64 // the same for RssAnon
	slopeSamples int
	rssStart     int64
	rssEnd       int64
	rssMax       int64
	diskPerTx    float64 // (last − first sample's allocated datadir bytes) / acked
	// diskStopped is the datadir once the node stopped gracefully, and
	// stoppedPerTx its allocated bytes over the first sample's, per acked
	// transfer: the history's cost without the live files' preallocation.
	diskStopped  diskUsage
	stoppedPerTx float64
	nodeCPU      time.Duration
	// snapshots and maxPause: the snapshots the node logged storing during
	// the run, and the longest sequencer pause one of them cost.
	snapshots   int
	maxPause    time.Duration
	signCPU     time.Duration // the signer threads'
	signed      int64
	signers     int
	selfCPU     time.Duration // the whole loadgen process's, during the run
	startListen time.Duration // first start, process start to listening
	stop        time.Duration // graceful stop after the run
	// Restart on the same datadir: process start to listening, and to the
	// first transfer accepted; writeAttempts sends it took.
	restartListen time.Duration
	restartWrite  time.Duration
	writeAttempts int
	noncesAfter   uint64 // the accounts' nonces added up after the restart
}

// soakTarget is a started node and what soak needs to talk to it.
type soakTarget struct {
	node   *proc.Ledgerd
	addr   string // host:port
	header string // admin authorization
}

// runSoak runs the soak scenario on each binary in turn and prints the
// ratios when there are two. It fails if a run saw errors.
func runSoak(ctx context.Context, o *options, w io.Writer) ([]*soakReport, error) {
	if _, _, err := processRSS(os.Getpid()); err != nil {
		return nil, err
	}
	bins, cleanup, err := soakBinaries(o.soakBins, w)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	fmt.Fprintf(w, "loadgen soak: %s %s/%s GOMAXPROCS=%d NumCPU=%d; conns=%d pipeline=%d duration=%v sample=%v warmup=%.2f\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU(),
		o.conns, o.pipeline, o.duration, o.sample, o.warmup)
	var reports []*soakReport
	var failed []string
	for i, bin := range bins {
		label := string(rune('A' + i))
		rep, err := soakBinary(ctx, w, o, label, bin)
		if err != nil {
			return reports, fmt.Errorf("binary %s (%s): %w", label, bin, err)
		}
		printSoakReport(w, rep)
		reports = append(reports, rep)
		if rep.errorCount > 0 || rep.unanswered > 0 {
			failed = append(failed, fmt.Sprintf("binary %s: %d errors, %d unanswered", label, rep.errorCount, rep.unanswered))
		}
	}
	if len(reports) == 2 {
		printSoakRatios(w, reports[0], reports[1])
	}
	if len(failed) > 0 {
		return reports, errors.New(strings.Join(failed, "; "))
	}
	return reports, nil
}

// soakBinaries returns the -soak-bin binaries, as absolute paths (a bare
// name would be looked up in PATH), or builds ./cmd/ledgerd of the module
// around the working directory into a temp dir that cleanup removes.
func soakBinaries(list string, w io.Writer) (bins []string, cleanup func(), err error) {
	cleanup = func() {}
	if list != "" {
		for _, b := range strings.Split(list, ",") {
			abs, err := filepath.Abs(b)
			if err != nil {
				return nil, cleanup, err
			}
			if info, err := os.Stat(abs); err != nil || !info.Mode().IsRegular() || info.Mode()&0o111 == 0 {
				return nil, cleanup, fmt.Errorf("-soak-bin %q is not an executable file", b)
			}
			bins = append(bins, abs)
		}
		return bins, cleanup, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, cleanup, err
	}
	dir, err := os.MkdirTemp("", "loadgen-soak-bin-")
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	start := time.Now()
	bin, err := proc.Build(root, "./cmd/ledgerd", dir)
	if err != nil {
		cleanup()
		return nil, func() {}, err
	}
	fmt.Fprintf(w, "built %s/cmd/ledgerd (CGO_ENABLED=0) in %v\n", root, round(time.Since(start)))
	return []string{bin}, cleanup, nil
}

var moduleLineRE = regexp.MustCompile(`(?m)^module\s+github\.com/ledgervenue/node\s*$`)

// moduleRoot returns the directory of this repository's go.mod, as the go
// command finds it from the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("cannot run go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	b, err := os.ReadFile(gomod)
	if gomod == "" || gomod == os.DevNull || err != nil || !moduleLineRE.Match(b) {
		return "", fmt.Errorf("no github.com/ledgervenue/node go.mod around the working directory (go env GOMOD: %q): run from the repository or pass -soak-bin", gomod)
	}
	return filepath.Dir(gomod), nil
}

// soakBinary soaks one binary on a fresh temp datadir: start, fund, load
// with sampling, graceful stop, restart with a first write, stop.
func soakBinary(ctx context.Context, w io.Writer, o *options, label, bin string) (*soakReport, error) {
	dir, err := os.MkdirTemp("", "loadgen-soak-")
	if err != nil {
		return nil, fmt.Errorf("cannot create datadir: %w", err)
	}
	if o.keepData {
		defer fmt.Fprintf(w, "  datadir kept: %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	fmt.Fprintf(w, "\n== soak %s: %s, datadir %s\n", label, bin, dir)
	args, header, err := soakArgs(dir)
	if err != nil {
		return nil, err
	}
	rep := &soakReport{label: label, bin: bin}
	start := time.Now()
	t, err := startTarget(bin, args, header)
	if err != nil {
		return nil, err
	}
	defer t.end(ctx) // a no-op once stopped
	rep.startListen = time.Since(start)
	keys, addrs := deriveKeys(o.seed, 0, o.conns*o.pipeline)
	start = time.Now()
	if err := fund(ctx, t.addr, t.header, addrs, soakFundedTxs); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "  listening after %v; funded %d accounts in %v\n", round(rep.startListen), len(addrs), round(time.Since(start)))
	if err := soakLoad(ctx, w, o, t, dir, keys, rep); err != nil {
		return nil, err
	}
	log := t.node.Log()
	rep.stop = t.end(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.snapshots, rep.maxPause = snapshotPauses(log)
	if rep.diskStopped, err = dirUsage(dir); err != nil {
		return nil, err
	}
	if rep.acked > 0 {
		rep.stoppedPerTx = float64(rep.diskStopped.allocated-rep.samples[0].disk.allocated) / float64(rep.acked)
	}
	if err := soakRestart(ctx, bin, args, header, keys[0], addrs, rep, sinkAddress(o.seed)); err != nil {
		return nil, fmt.Errorf("restart: %w", err)
	}
	return rep, nil
}

// snapshotPauses reads the node's "snapshot at input N stored: …; the
// sequencer paused D to take it" lines: how many, and the longest pause.
func snapshotPauses(log string) (n int, longest time.Duration) {
	const marker, tail = "the sequencer paused ", " to take it"
	for _, l := range strings.Split(log, "\n") {
		i := strings.Index(l, marker)
		if i < 0 {
			continue
		}
		d, err := time.ParseDuration(strings.TrimSuffix(l[i+len(marker):], tail))
		if err != nil {
			continue
		}
		n++
		longest = max(longest, d)
	}
	return n, longest
}

// soakArgs returns ledgerd's arguments for dir, with a fresh admin token,
// and the header line that authorizes admin calls with it.
func soakArgs(dir string) (args []string, header string, err error) {
	var token [16]byte
	if _, err := rand.Read(token[:]); err != nil {
		return nil, "", err
	}
	t := hex.EncodeToString(token[:])
	return []string{"--dev", "--datadir", dir, "--admin-token", t}, "Authorization: Bearer " + t + "\r\n", nil
}

func startTarget(bin string, args []string, header string) (*soakTarget, error) {
	n, err := proc.Start(bin, args...)
	if err != nil {
		return nil, err
	}
	return &soakTarget{node: n, addr: strings.TrimPrefix(n.HTTP, "http://"), header: header}, nil
}

// end stops the node, gracefully unless ctx ended (Ctrl-C: then it is
// killed), and returns how long that took. Later calls do nothing.
func (t *soakTarget) end(ctx context.Context) time.Duration {
	if t.node == nil {
		return 0
	}
	start := time.Now()
	if ctx.Err() != nil {
		t.node.Kill()
	} else {
		t.node.Stop()
	}
	t.node = nil
	return time.Since(start)
}

// soakLoad sends transfers for o.duration while sampling the node, and
// fills in the run's part of rep.
func soakLoad(ctx context.Context, w io.Writer, o *options, t *soakTarget, dir string, keys []*ecdsa.PrivateKey, rep *soakReport) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := newSoakSender(keys, o.pipeline, sinkAddress(o.seed), cancel)
	pid := t.node.PID()
	nodeCPU0, err := processCPU(pid)
	if err != nil {
		return err
	}
	self0 := selfCPU()
	rep.signers = min(runtime.GOMAXPROCS(0), len(keys))
	s.startSigners(runCtx, rep.signers)
	smp := startSampler(w, pid, dir, &s.acked, o.sample)
	r, err := load.Run(runCtx, load.Config{Addr: t.addr, Conns: o.conns, Pipeline: o.pipeline,
		Requests: o.requests, Duration: o.duration, Next: s.next(runCtx), Check: s.check})
	samples, serr := smp.stop()
	cancel()
	signErr := s.waitSigners()
	switch {
	case err != nil:
		return err
	case serr != nil:
		return serr
	case signErr != nil:
		return signErr
	}
	nodeCPU1, err := processCPU(pid)
	if err != nil {
		return err
	}
	rep.nodeCPU, rep.selfCPU = nodeCPU1-nodeCPU0, selfCPU()-self0
	rep.signCPU, rep.signed = time.Duration(s.signCPUNs.Load()), s.signed.Load()
	rep.samples, rep.elapsed = samples, r.Elapsed
	tally(rep, r, s)
	summarizeSamples(rep, o.warmup, o.sample)
	return nil
}

// tally fills in the answer counts and pairs the client's counts with the
// sender's.
func tally(rep *soakReport, r *load.Result, s *soakSender) {
	rep.acked = s.acked.Load()
	refused, failed := s.refusals.total, s.errors.total
	if refused+failed != r.Done-rep.acked {
		panic(fmt.Sprintf("BUG: %d answers not acknowledged, but %d refusals and %d errors counted", r.Done-rep.acked, refused, failed))
	}
	rep.refusals, rep.errors, rep.errorCount = s.refusals.String(), s.errors.String(), failed
	rep.unanswered = r.Errors - refused - failed
	switch {
	case failed > 0:
		rep.endedEarly = "ended at the first error, " + s.errors.first
	case r.FirstError != nil:
		rep.endedEarly = "a connection failed: " + r.FirstError.Error()
	case r.Exhausted:
		rep.endedEarly = "ended on -requests"
	}
}

// summarizeSamples computes the rates, the RSS figures and the slope after
// the first warmup fraction of the run. The median rate leaves out
// intervals shorter than half the sampling interval (the last one, taken
// when the run ends): too short to mean much.
func summarizeSamples(rep *soakReport, warmup float64, interval time.Duration) {
	ss := rep.samples
	first, last := ss[0], ss[len(ss)-1]
	rep.rssStart, rep.rssEnd = first.rssBytes, last.rssBytes
	rates := make([]float64, 0, len(ss)-1)
	for i, s := range ss {
		rep.rssMax = max(rep.rssMax, s.rssBytes)
		if i > 0 && s.elapsed-ss[i-1].elapsed >= interval/2 {
			rates = append(rates, float64(s.acked-ss[i-1].acked)/(s.elapsed-ss[i-1].elapsed).Seconds())
		}
	}
	rep.medianRate, rep.intervals = medianOf(rates), len(rates)
	if rep.elapsed > 0 {
		rep.meanRate = float64(rep.acked) / rep.elapsed.Seconds()
	}
	if rep.acked > 0 {
		rep.diskPerTx = float64(last.disk.allocated-first.disk.allocated) / float64(rep.acked)
	}
	from := time.Duration(warmup * float64(last.elapsed))
	var xs, ys, anon []float64
	for _, s := range ss {
		if s.elapsed >= from {
			xs, ys, anon = append(xs, float64(s.acked)), append(ys, float64(s.rssBytes)), append(anon, float64(s.anonRSS))
		}
	}
	rep.slope, rep.slopeSamples = leastSquaresSlope(xs, ys), len(xs)
	rep.anonSlope = leastSquaresSlope(xs, anon)
}

// leastSquaresSlope returns the slope of the least-squares line through
// (xs[i], ys[i]), or NaN when the xs do not differ.
//
// REQUIRES: len(xs) == len(ys).
func leastSquaresSlope(xs, ys []float64) float64 {
	if len(xs) != len(ys) {
		panic("BUG: leastSquaresSlope needs as many ys as xs")
	}
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	n := float64(len(xs))
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if len(xs) < 2 || sxx == 0 {
		return math.NaN()
	}
	return sxy / sxx
}

// soakRestart starts bin again on the datadir the run left and times it
// until it listens and until a first transfer (from key, at the nonce the
// node reports) is accepted; then checks that the accounts' nonces add up
// to what was acknowledged, plus that transfer.
func soakRestart(ctx context.Context, bin string, args []string, header string, key *ecdsa.PrivateKey,
	addrs []common.Address, rep *soakReport, to common.Address) error {
	start := time.Now()
	t, err := startTarget(bin, args, header)
	if err != nil {
		return err
	}
	defer t.end(ctx)
	rep.restartListen = time.Since(start)
	signer := types.LatestSignerForChainID(big.NewInt(chainID))
	for rep.writeAttempts = 1; ; rep.writeAttempts++ {
		ok, err := firstWrite(ctx, t.addr, key, signer, addrs[0], to)
		if ok {
			break
		}
		if time.Since(start) > restartWriteTimeout || ctx.Err() != nil {
			return fmt.Errorf("no transfer accepted %v after the restart (%d attempts): %v", restartWriteTimeout, rep.writeAttempts, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	rep.restartWrite = time.Since(start)
	nonces, err := readNonces(ctx, t.addr, addrs)
	if err != nil {
		return err
	}
	for _, n := range nonces {
		rep.noncesAfter += n
	}
	// Unanswered transfers, and those answered with an error (a durability
	// timeout, say), may or may not have been admitted.
	unsure := uint64(rep.unanswered + rep.errorCount)
	if lo := uint64(rep.acked) + 1; rep.noncesAfter < lo || rep.noncesAfter > lo+unsure {
		return fmt.Errorf("after the restart the nonces add up to %d, want %d acknowledged transfers + 1 (+ up to %d unanswered or failed)",
			rep.noncesAfter, rep.acked, unsure)
	}
	return nil
}

// firstWrite reads from's nonce and sends one transfer with it; ok says it
// was acknowledged, err why not.
func firstWrite(ctx context.Context, addr string, key *ecdsa.PrivateKey, signer types.Signer, from, to common.Address) (bool, error) {
	nonces, err := readNonces(ctx, addr, []common.Address{from})
	if err != nil {
		return false, err
	}
	raw, err := signedTransfer(key, signer, nonces[0], to)
	if err != nil {
		return false, err
	}
	answer, err := probe(ctx, addr, "", appendSoakBody(nil, 0, raw))
	if err != nil {
		return false, err
	}
	if !bytes.Contains(answer, []byte(`"result":"0x`)) {
		return false, fmt.Errorf("eth_sendRawTransaction answered %s", clip(answer, 300))
	}
	return true, nil
}

// nonceBatch is the eth_getTransactionCount requests per batch, well under
// the node's batch limit.
const nonceBatch = 100

// readNonces returns the nonces of addrs, read in batches.
func readNonces(ctx context.Context, addr string, addrs []common.Address) ([]uint64, error) {
	out := make([]uint64, len(addrs))
	for lo := 0; lo < len(addrs); lo += nonceBatch {
		hi := min(lo+nonceBatch, len(addrs))
		body := []byte{'['}
		for i := lo; i < hi; i++ {
			if i > lo {
				body = append(body, ',')
			}
			body = fmt.Appendf(body, `{"jsonrpc":"2.0","id":%d,"method":"eth_getTransactionCount","params":["%s","latest"]}`, i, addrs[i].Hex())
		}
		answer, err := probe(ctx, addr, "", append(body, ']'))
		if err != nil {
			return nil, err
		}
		var answers []rpcAnswer
		if err := json.Unmarshal(answer, &answers); err != nil || len(answers) != hi-lo {
			return nil, fmt.Errorf("eth_getTransactionCount batch: %v: %s", err, clip(answer, 300))
		}
		for _, a := range answers {
			var q string
			if a.Error != nil || a.ID < lo || a.ID >= hi || json.Unmarshal(a.Result, &q) != nil {
				return nil, fmt.Errorf("eth_getTransactionCount batch: bad answer %s", clip(answer, 300))
			}
			n, err := strconv.ParseUint(strings.TrimPrefix(q, "0x"), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("eth_getTransactionCount: %q: %w", q, err)
			}
			out[a.ID] = n
		}
	}
	return out, nil
}

func printSoakReport(w io.Writer, r *soakReport) {
	fmt.Fprintf(w, "  acked %d in %v: %.0f tx/s mean, %.0f tx/s median of %d intervals\n",
		r.acked, round(r.elapsed), r.meanRate, r.medianRate, r.intervals)
	if r.endedEarly != "" {
		fmt.Fprintf(w, "  %s\n", r.endedEarly)
	}
	last := r.samples[len(r.samples)-1]
	fmt.Fprintf(w, "  RSS start %.1f MB, end %.1f MB, max %.1f MB; slope after warm-up %s B/tx, %s B/tx anonymous (%d samples over %v)\n",
		megabytes(r.rssStart), megabytes(r.rssEnd), megabytes(r.rssMax), formatFloat(r.slope, 1), formatFloat(r.anonSlope, 1), r.slopeSamples,
		round(last.elapsed-r.samples[len(r.samples)-r.slopeSamples].elapsed))
	first := r.samples[0]
	fmt.Fprintf(w, "  disk %.1f -> %.1f MB allocated: %.0f B/tx (files %.1f -> %.1f MB); after the stop %.1f MB allocated: %.0f B/tx (files %.1f MB)\n",
		megabytes(first.disk.allocated), megabytes(last.disk.allocated), r.diskPerTx,
		megabytes(first.disk.apparent), megabytes(last.disk.apparent),
		megabytes(r.diskStopped.allocated), r.stoppedPerTx, megabytes(r.diskStopped.apparent))
	fmt.Fprintf(w, "  refusals %s; errors %s; unanswered %d\n", r.refusals, r.errors, r.unanswered)
	fmt.Fprintf(w, "  CPU: node %v (%s/tx); loadgen %v in all, signing %v on %d threads (%s per signed tx, %d signed)\n",
		round(r.nodeCPU), perTx(r.nodeCPU, r.acked), round(r.selfCPU), round(r.signCPU), r.signers,
		perTx(r.signCPU, r.signed), r.signed)
	fmt.Fprintf(w, "  snapshots stored: %d, longest sequencer pause %v\n", r.snapshots, r.maxPause)
	stopNote := ""
	if r.stop >= stopKillAfter {
		stopNote = " (SIGTERM was not enough: killed)"
	}
	fmt.Fprintf(w, "  stopped in %v%s; restart on the same datadir: listening after %v, first write accepted after %v (attempts: %d); nonces add up to %d\n",
		round(r.stop), stopNote, round(r.restartListen), round(r.restartWrite), r.writeAttempts, r.noncesAfter)
}

// printSoakRatios prints new/old for two binaries, b the new one.
func printSoakRatios(w io.Writer, a, b *soakReport) {
	fmt.Fprintf(w, "\n== ratio %s/%s (new/old): throughput %s mean, %s median; RSS slope %s (%s -> %s B/tx); disk/tx %s; restart to first write %s\n",
		b.label, a.label, formatFloat(b.meanRate/a.meanRate, 3), formatFloat(b.medianRate/a.medianRate, 3),
		formatFloat(b.slope/a.slope, 3), formatFloat(a.slope, 1), formatFloat(b.slope, 1),
		formatFloat(b.diskPerTx/a.diskPerTx, 3), formatFloat(ratio(b.restartWrite, a.restartWrite), 3))
}

// formatFloat prints v with prec decimals, or n/a when it is not a number
// (an undefined slope, a ratio to zero).
func formatFloat(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func perTx(d time.Duration, n int64) string {
	if n <= 0 {
		return "n/a"
	}
	return round(d / time.Duration(n)).String()
}
