package main

import (
	"fmt"
	"os"

	"github.com/ledgervenue/node/net/node"
)

// loadState starts a node on an empty data directory from the state file
// of --load-state. A data directory that holds inputs is refused rather
// than overwritten: nothing acknowledged there is thrown away.
func loadState(n *node.Node, f *flags) error {
	if seq, _ := n.StateAt(); seq > 0 {
		return fmt.Errorf("--load-state %s: the data directory %s already holds %d inputs; load into an empty one (another --datadir, or make clean)",
			f.loadState, f.datadir, seq)
	}
	file, err := os.Open(f.loadState)
	if err != nil {
		return fmt.Errorf("--load-state: %w", err)
	}
	defer file.Close()
	if err := n.LoadState(file); err != nil {
		return fmt.Errorf("--load-state %s: %w", f.loadState, err)
	}
	return nil
}
