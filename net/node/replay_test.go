package node

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/persist"
)

// TestReplayRefusesWhatIsNoSession: a missing directory, one without a log
// and one whose store is garbage get an error that says so, and nothing is
// created.
func TestReplayRefusesWhatIsNoSession(t *testing.T) {
	empty := t.TempDir()
	garbage := t.TempDir()
	if err := os.WriteFile(filepath.Join(garbage, "MANIFEST"), []byte("not a manifest"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(empty, "missing"), "not a ledgerd data directory"},
		{empty, "not a ledgerd data directory"},
		{garbage, "cannot open intent log"},
	} {
		_, err := Replay(ReplayConfig{DataDir: c.dir, Out: io.Discard})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("replay of %s: %v, want an error with %q", c.dir, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(empty, "missing")); !os.IsNotExist(err) {
		t.Fatalf("the replay created the missing directory: %v", err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Fatalf("the replay wrote into an empty directory: %v", ents)
	}
}

// TestReplayUsesStoredGenesis: the replay of a node's directory starts from
// the genesis Open stored, not the one it is given, and ends at the node's
// state; a stored genesis the log does not apply under is a clear error.
func TestReplayUsesStoredGenesis(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, testConfig(t, dir))
	submitWait(t, n, devTransfer(0, 5))
	submitWait(t, n, devTransfer(1, 7))
	seq, hash := n.StateAt()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	other := Config{ChainID: 1} // ignored: the directory stores its genesis
	var out bytes.Buffer
	res, err := Replay(ReplayConfig{DataDir: dir, Genesis: &other, Out: &out})
	if err != nil || res.Seq != seq || res.Hash != hash {
		t.Fatalf("replay: %+v %v, want seq %d hash %x", res, err, seq, hash)
	}
	if want := string(AppendStateHash(nil, seq, hash)) + "\n"; out.String() != want {
		t.Fatalf("output %q, want %q", out.String(), want)
	}

	// --accounts: up to ReplayAccountsMax, each with its two subscriptions.
	accounts := make([]core.Address, ReplayAccountsMax+1)
	for i := range accounts {
		accounts[i] = core.Address{byte(i), 1}
	}
	if _, err := Replay(ReplayConfig{DataDir: dir, Out: io.Discard, Frames: io.Discard, Accounts: accounts}); err == nil {
		t.Fatalf("replay with %d accounts accepted", len(accounts))
	}
	var frames bytes.Buffer
	if _, err := Replay(ReplayConfig{DataDir: dir, Out: io.Discard, Frames: &frames, Accounts: accounts[:ReplayAccountsMax]}); err != nil {
		t.Fatalf("replay with %d accounts: %v", ReplayAccountsMax, err)
	}
	if n := strings.Count(frames.String(), `{"channel":"svc_positions"`); n != ReplayAccountsMax {
		t.Fatalf("%d svc_positions snapshots, want one per account", n)
	}

	// Another chain id in the stored genesis: the first transfer does not apply.
	lg, err := persist.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := lg.Genesis()
	var d genesisDesc
	if err := json.Unmarshal(b, &d); err != nil || d.ChainID != 0x50d || len(d.Allocs) != len(DevGenesis()) {
		t.Fatalf("stored genesis %s: %v", b, err)
	}
	d.ChainID = 7
	b, _ = json.Marshal(&d)
	if err := lg.SetGenesis(b); err != nil {
		t.Fatal(err)
	}
	lg.Close()
	_, err = Replay(ReplayConfig{DataDir: dir, Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "intent log seq 1 does not apply") {
		t.Fatalf("replay under another chain id: %v", err)
	}
}

// TestReplayOlderDirectory: a log written without a genesis description
// (as before Open stored one) replays with the genesis it is given, and is
// refused without one.
func TestReplayOlderDirectory(t *testing.T) {
	dir := t.TempDir()
	lg, err := persist.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	in := core.Input{Kind: core.InputDeposit, DepositID: core.Hash{1}, Token: core.NativeToken, To: DevAddress(2), Amount: *uint256.NewInt(9)}
	if err := lg.Append(&persist.Group{Inputs: []*core.Input{&in}}); err != nil {
		t.Fatal(err)
	}
	lg.Close()
	if _, err := Replay(ReplayConfig{DataDir: dir, Out: io.Discard}); err == nil || !strings.Contains(err.Error(), "stores no genesis description") {
		t.Fatalf("replay without a genesis: %v", err)
	}
	gen := testConfig(t, "")
	res, err := Replay(ReplayConfig{DataDir: dir, Genesis: &gen, Out: io.Discard})
	if err != nil || res.Seq != 1 {
		t.Fatalf("replay with the genesis flags: %+v %v", res, err)
	}
	want, _ := newReplayNode(gen)
	want.ledger.Apply(&in)
	if res.Hash != want.ledger.StateHash() {
		t.Fatal("the replay's state is not the genesis plus the deposit")
	}

	// Retention deleted the log's first input: no replay from genesis.
	lg, err = persist.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	in2 := in
	in2.DepositID = core.Hash{2}
	err = lg.Append(&persist.Group{Inputs: []*core.Input{&in2}})
	if err == nil {
		err = lg.PruneLogBefore(2)
	}
	lg.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Replay(ReplayConfig{DataDir: dir, Genesis: &gen, Out: io.Discard}); err == nil || !strings.Contains(err.Error(), "starts at input 2") {
		t.Fatalf("replay of a pruned log: %v", err)
	}
}
