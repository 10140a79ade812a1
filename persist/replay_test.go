package persist

import (
	"bytes"
	"strings"
	"testing"
)

// TestGenesisAndReadOnly: the genesis description round-trips, its bound
// holds, and a read-only open is refused while the log is open for writing,
// then reads what was stored.
func TestGenesisAndReadOnly(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := l.Genesis(); g != nil || err != nil {
		t.Fatalf("genesis of a new log: %q %v", g, err)
	}
	if err := l.SetGenesis(make([]byte, GenesisBytesMax+1)); err == nil {
		t.Fatal("a genesis description over GenesisBytesMax was stored")
	}
	desc := []byte(`{"version":1}`)
	if err := l.SetGenesis(desc); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReadOnly(dir); err == nil || !strings.Contains(err.Error(), "in use by a running node") {
		t.Fatalf("read-only open of a log open for writing: %v", err)
	}
	l.Close()
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if g, err := r.Genesis(); !bytes.Equal(g, desc) || err != nil {
		t.Fatalf("genesis read back %q %v", g, err)
	}
	if first := r.FirstSeq(); first != 0 {
		t.Fatalf("first seq of an empty log: %d", first)
	}
	if err := r.SetGenesis([]byte(`{}`)); err == nil {
		t.Fatal("a read-only log took a write")
	}
}
