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
	"github.com/ledgervenue/node/core"
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
	if err := replay(cfg, *frames, os.Stdout, os.Stderr); err != nil {
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
