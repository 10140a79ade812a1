package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ethereum/go-ethereum/common"

	"github.com/ledgervenue/node/bench/scenario"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/node"
)

// loadScenario checks --scenario against the other flags and reads its
// file, before the node opens; nil without --scenario. A scenario needs
// --dev (it plays the dev markets) and owns the node's time, so it sets the
// manual clock and refuses --clock wall and --bots (the file names its
// bots); it plays from genesis on a node of its own, so it refuses
// --load-state and --follow too.
func (f *flags) loadScenario() (*scenario.Scenario, error) {
	if f.scenario == "" {
		return nil, nil
	}
	clockSet := false
	flag.Visit(func(fl *flag.Flag) { clockSet = clockSet || fl.Name == "clock" })
	switch {
	case !f.dev:
		return nil, errors.New("--scenario needs --dev (it plays the dev markets)")
	case f.bots != "":
		return nil, errors.New(`--scenario conflicts with --bots: the scenario file names its bots ("bots")`)
	case clockSet && f.clock != "manual":
		return nil, errors.New("--scenario conflicts with --clock wall: the scenario owns the node's time (a manual clock)")
	case f.loadState != "" || f.follow:
		return nil, errors.New("--scenario plays from genesis on a node of its own: it conflicts with --load-state and --follow")
	}
	f.clock = "manual"
	file, err := os.Open(f.scenario)
	if err != nil {
		return nil, fmt.Errorf("--scenario: %w", err)
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, scenario.FileBytesMax+1))
	if err != nil {
		return nil, fmt.Errorf("--scenario: %w", err)
	}
	sc, err := scenario.Parse(data)
	if err == nil {
		_, err = scenario.Check(sc, devMarket)
	}
	if err != nil {
		return nil, fmt.Errorf("--scenario %s: %w", f.scenario, err)
	}
	return sc, nil
}

// devMarket finds a dev market by name (nil: none).
func devMarket(name string) *scenario.Market {
	for _, m := range append(node.DevMarkets(), node.DevPerpMarkets()...) {
		if m.Name == name {
			return &scenario.Market{ID: common.Hash(m.ID), Perp: m.Kind == clob.Perp, Step: m.TickPrecision}
		}
	}
	return nil
}

// checkFresh refuses a data directory that holds inputs: the scenario's
// repeatability starts at genesis.
func checkFresh(n *node.Node, f *flags) error {
	if seq, _ := n.StateAt(); seq > 0 {
		return fmt.Errorf("--scenario plays from genesis, and the data directory %s already holds %d inputs: give it an empty one (another --datadir)",
			f.datadir, seq)
	}
	return nil
}

// scenarioRun is a player running in the background; a nil one is no
// scenario.
type scenarioRun struct {
	cancel context.CancelFunc
	done   chan struct{}
	exit   bool  // "then": "exit"
	err    error // set before done closes
}

func startScenario(p *scenario.Player, sc *scenario.Scenario, addr string) *scenarioRun {
	ctx, cancel := context.WithCancel(context.Background())
	r := &scenarioRun{cancel: cancel, done: make(chan struct{}), exit: sc.Exit}
	go func() {
		defer close(r.done)
		r.err = p.Run(ctx, addr)
	}()
	return r
}

// exited is closed when a scenario with "then": "exit" ended; nil (never
// ready) otherwise.
func (r *scenarioRun) exited() <-chan struct{} {
	if r == nil || !r.exit {
		return nil
	}
	return r.done
}

// stop ends the player (after its call in flight) and waits for it.
func (r *scenarioRun) stop() {
	if r != nil {
		r.cancel()
		<-r.done
	}
}

// exitErr is the failure ledgerd exits with: a scenario with "then":
// "exit" that failed (one that serves on keeps its error in lab_scenario).
func (r *scenarioRun) exitErr() error {
	if r == nil || !r.exit || r.err == nil || errors.Is(r.err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("scenario: %w", r.err)
}
