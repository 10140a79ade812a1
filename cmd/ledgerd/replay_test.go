package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/net/node"
)

// TestReplayCommand: ledgerd replay's wiring: the state lines on stdout,
// the frames in the --frames file, the speed on stderr; bad arguments and
// a directory that is no session exit non-zero.
func TestReplayCommand(t *testing.T) {
	dir := t.TempDir()
	n, err := node.Open(node.Config{DataDir: filepath.Join(dir, "data"), ChainID: ChainID, BaseFee: *uint256.NewInt(1e9),
		Validators: 4, CommitteeSeed: []byte("cmd"), Clock: node.NewManualClock(1_000_000), Genesis: node.DevGenesis(),
		Markets: node.DevMarkets()})
	if err != nil {
		t.Fatal(err)
	}
	seq, hash := n.StateAt()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	frames := filepath.Join(dir, "frames.jsonl")
	if err := replay(node.ReplayConfig{DataDir: filepath.Join(dir, "data")}, frames, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := string(node.AppendStateHash(nil, seq, hash)) + "\n"; stdout.String() != want {
		t.Fatalf("stdout %q, want %q", stdout.String(), want)
	}
	b, err := os.ReadFile(frames)
	if err != nil || !strings.HasPrefix(string(b), `{"channel":"svc_markets","params":{},"result":{"orderbook":`) {
		t.Fatalf("frames file: %.200s %v", b, err)
	}
	if !strings.Contains(stderr.String(), "inputs/s") {
		t.Fatalf("stderr %q", stderr.String())
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--datadir", filepath.Join(dir, "none")}, 1},
		{[]string{"--datadir", dir, "extra"}, 2},
		{[]string{"--datadir", dir, "--accounts", "0x01"}, 2},
		{[]string{"--datadir", dir, "--accounts", "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"}, 2}, // needs --frames
		{[]string{"--datadir", dir, "--report", "0x01"}, 2},
		{[]string{"--datadir", dir, "--report", "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "--report-format", "xml"}, 2},
		{[]string{"--datadir", dir, "--report", "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "--report-from", "9", "--report-to", "8"}, 2},
	} {
		if got := replayMain(c.args); got != c.want {
			t.Errorf("ledgerd replay %v: exit %d, want %d", c.args, got, c.want)
		}
	}
}
