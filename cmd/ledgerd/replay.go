package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/net/node"
)

// replayProgressInterval is how often a long replay reports its progress
// on stderr.
const replayProgressInterval = time.Second

// replayMain runs `ledgerd replay` (docs/replay.md) with the arguments after
// "replay" and returns the exit status.
func replayMain(args []string) int {
	fs := flag.NewFlagSet("ledgerd replay", flag.ContinueOnError)
	datadir := fs.String("datadir", "./data", "data directory to replay (read only; stop the node first)")
	frames := fs.String("frames", "", "write every subscription frame the ticks published to this file, one JSON line each")
	accounts := fs.String("accounts", "", fmt.Sprintf("with --frames, also the svc_positions and svc_triggers frames of these accounts (comma-separated, at most %d)", node.ReplayAccountsMax))
	var rf reportFlags
	rf.register(fs)
	// The genesis flags of ledgerd, for a data directory that stores no
	// genesis description (written by an older ledgerd); ignored otherwise.
	var g genesisFlags
	g.register(fs, "genesis of an older data directory, as the node ran: ")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "ledgerd replay: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	gen := g.config()
	cfg := node.ReplayConfig{DataDir: *datadir, Genesis: &gen}
	for _, a := range list(*accounts) {
		if !common.IsHexAddress(a) {
			fmt.Fprintf(os.Stderr, "ledgerd replay: --accounts: %q is not a hex address\n", a)
			return 2
		}
		cfg.Accounts = append(cfg.Accounts, core.Address(common.HexToAddress(a)))
	}
	if len(cfg.Accounts) > 0 && *frames == "" {
		fmt.Fprintln(os.Stderr, "ledgerd replay: --accounts needs --frames")
		return 2
	}
	stdout := io.Writer(os.Stdout)
	closeReport := func() error { return nil }
	if rf.account != "" {
		var err error
		if closeReport, err = rf.setup(&cfg, &stdout); err != nil {
			fmt.Fprintf(os.Stderr, "ledgerd replay: %v\n", err)
			return 2
		}
	}
	err := replay(cfg, *frames, stdout, os.Stderr)
	if cerr := closeReport(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ledgerd replay: %v\n", err)
		return 1
	}
	return 0
}

// replay runs cfg, writing the state lines to stdout and the progress to
// stderr, and the frames to the file frames ("": none).
func replay(cfg node.ReplayConfig, frames string, stdout, stderr io.Writer) error {
	out := bufio.NewWriter(stdout)
	cfg.Out = out
	var fw *bufio.Writer
	closeFrames := func() error { return nil }
	if frames != "" {
		f, err := os.Create(frames)
		if err != nil {
			return err
		}
		defer f.Close() // after an error; else closed below, its error checked
		fw = bufio.NewWriterSize(f, 1<<20)
		cfg.Frames = fw
		closeFrames = f.Close
	}
	start, last := time.Now(), time.Now()
	cfg.Progress = func(done, total uint64) {
		if time.Since(last) >= replayProgressInterval {
			last = time.Now()
			fmt.Fprintf(stderr, "replay: %d of %d inputs (%.0f%%)\n", done, total, 100*float64(done)/float64(max(total, 1)))
		}
	}
	res, err := node.Replay(cfg)
	if err == nil {
		err = flush(out, fw)
	}
	if err == nil {
		err = closeFrames()
	}
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Fprintf(stderr, "replay: %d inputs, %d ticks, %d frames in %v (%.0f inputs/s, %.0f ticks/s)\n", res.Seq, res.Ticks,
		res.Frames, took.Round(time.Millisecond), float64(res.Seq)/took.Seconds(), float64(res.Ticks)/took.Seconds())
	return nil
}

// flush flushes the writers that are set, the first error first.
func flush(ws ...*bufio.Writer) error {
	for _, w := range ws {
		if w != nil {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// reportFlags are ledgerd replay's --report flags: the strategy report of
// one account after the replay, the same bytes lab_strategyReport answers
// live for the same window (docs/lab.md, "The strategy report").
type reportFlags struct {
	account, format, out string
	from, to             int64
}

func (rf *reportFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&rf.account, "report", "", "after the replay, write the strategy report of this account (0x address)")
	fs.Int64Var(&rf.from, "report-from", -1, "the report's window start, µs of node time (default: the account's oldest kept fill)")
	fs.Int64Var(&rf.to, "report-to", -1, "the report's window end, µs of node time (default: the latest tick)")
	fs.StringVar(&rf.format, "report-format", "json", "json (lab_strategyReport's answer), csv (per market) or series (the PnL series, CSV)")
	fs.StringVar(&rf.out, "report-out", "", "write the report to this file and the state lines to stdout (default: the report alone to stdout)")
}

// setup checks the flags and makes cfg write the report after the
// replay: to the --report-out file, else to *stdout, which then no longer
// receives the state lines. The returned function closes the file.
func (rf *reportFlags) setup(cfg *node.ReplayConfig, stdout *io.Writer) (func() error, error) {
	if !common.IsHexAddress(rf.account) {
		return nil, fmt.Errorf("--report: %q is not a hex address", rf.account)
	}
	format, ok := obwire.ReportFormats[rf.format]
	if !ok {
		return nil, fmt.Errorf("--report-format: %q, want json, csv or series", rf.format)
	}
	q := marketdata.ReportQuery{Owner: clob.Address(common.HexToAddress(rf.account)), FromUs: rf.from, ToUs: rf.to,
		HasFrom: rf.from >= 0, HasTo: rf.to >= 0}
	if q.HasFrom && q.HasTo && q.ToUs < q.FromUs {
		return nil, errors.New("--report-to: before --report-from")
	}
	w, closeFile := *stdout, func() error { return nil }
	if rf.out != "" {
		f, err := os.Create(rf.out)
		if err != nil {
			return nil, err
		}
		w, closeFile = f, f.Close
	} else {
		*stdout = io.Discard
	}
	cfg.Index = func(x *marketdata.Index) error {
		rep, err := x.Report(&q)
		if err != nil {
			return fmt.Errorf("--report: %w", err)
		}
		_, err = w.Write(append(obwire.AppendReportAs(nil, rep, format), '\n'))
		return err
	}
	return closeFile, nil
}
