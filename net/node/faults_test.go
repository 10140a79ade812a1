package node

import (
	"errors"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
)

// TestRejectedErrorMessage: the message joins the distinct reasons with
// ", " in first-seen order; the reasons stay one per validator.
func TestRejectedErrorMessage(t *testing.T) {
	e := &RejectedError{Reasons: []string{"a", "b", "a", "c"}}
	if got := e.Error(); got != "Transaction rejected: a, b, c" {
		t.Fatalf("message %q", got)
	}
}

// TestBlacklistBound: BlacklistMax entries fit (addresses and hashes
// together), one more is refused and changes nothing; removing frees room.
func TestBlacklistBound(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir()))
	defer n.Close()
	for i := range BlacklistMax {
		var err error
		if i%2 == 0 {
			a := core.Address{byte(i), byte(i >> 8), 1}
			err = n.Blacklist(&a, nil, false)
		} else {
			h := core.Hash{byte(i), byte(i >> 8), 2}
			err = n.Blacklist(nil, &h, false)
		}
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	extra := core.Hash{0xff, 0xff, 0xff}
	if err := n.Blacklist(nil, &extra, false); !errors.Is(err, ErrBlacklistFull) {
		t.Fatalf("entry %d: %v, want ErrBlacklistFull", BlacklistMax+1, err)
	}
	if _, listed := n.faults.cur.Load().hashes[extra]; listed {
		t.Fatal("a refused entry was listed")
	}
	first := core.Address{0, 0, 1}
	if err := n.Blacklist(&first, nil, true); err != nil {
		t.Fatal(err)
	}
	if err := n.Blacklist(nil, &extra, false); err != nil {
		t.Fatalf("after a removal: %v", err)
	}
	if err := n.Blacklist(nil, nil, false); !errors.Is(err, ErrBlacklistEntry) {
		t.Fatalf("no entry: %v", err)
	}
}

// TestFaultBounds: reject and silent stay in [0, N]; a rejection needs a
// reason of 1..FaultReasonMax bytes.
func TestFaultBounds(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir()))
	defer n.Close()
	long := string(make([]byte, FaultReasonMax))
	for _, c := range []struct {
		f    Faults
		want error
	}{
		{Faults{Reject: 4, Reason: long, Silent: 4}, nil},
		{Faults{Reject: 5, Reason: "x"}, ErrFaultsInvalid},
		{Faults{Silent: 5}, ErrFaultsInvalid},
		{Faults{Reject: -1, Reason: "x"}, ErrFaultsInvalid},
		{Faults{Reject: 1}, ErrFaultReason},
		{Faults{Reject: 1, Reason: long + "x"}, ErrFaultReason},
	} {
		if err := n.SetValidatorFaults(c.f); !errors.Is(err, c.want) {
			t.Fatalf("%+v: %v, want %v", c.f, err, c.want)
		}
	}
}

// TestSignersAndRejections: silent members are the highest-indexed and
// sign nothing; rejecting members are the lowest-indexed, and a silent one
// does not reject.
func TestSignersAndRejections(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir()))
	defer n.Close()
	if s := n.SigningValidators(); len(s) != 4 || s[3] != 3 {
		t.Fatalf("no faults: signers %v", s)
	}
	if err := n.SetValidatorFaults(Faults{Reject: 3, Reason: "r", Silent: 2}); err != nil {
		t.Fatal(err)
	}
	st := n.faults.cur.Load()
	if s := n.SigningValidators(); len(s) != 2 || s[0] != 0 || s[1] != 1 {
		t.Fatalf("two silent: signers %v", s)
	}
	if len(st.rejections) != 2 {
		t.Fatalf("3 rejecting, 2 silent of 4: %d rejections, want 2", len(st.rejections))
	}
	var dissent []string
	if rej, err := n.SubmitTxVotes(devTransfer(0, 1), &dissent, func(*Entry, error) {}); !errors.As(err, new(*RejectedError)) || !rej.OK() {
		t.Fatalf("2 rejections (f + 1): %v", err)
	}
}

// TestAttesterWaitsForQuorum: with fewer signers than the quorum the
// record is durable and not attested; the uptime counts the waiting; once
// the signers are back it is attested with all of them.
func TestAttesterWaitsForQuorum(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir()))
	defer n.Close()
	if err := n.SetValidatorFaults(Faults{Silent: 2}); err != nil {
		t.Fatal(err)
	}
	tx := devTransfer(0, 1)
	attested := submitDurable(t, n, tx)
	select {
	case <-attested:
		t.Fatal("attested by 2 of 4")
	case <-time.After(1200 * time.Millisecond):
	}
	if m := n.Metrics(); m.ValidatorUptime != 0.5 {
		t.Fatalf("uptime while the batch waits with 2 of 4 signers: %v, want 0.5", m.ValidatorUptime)
	}
	if err := n.SetValidatorFaults(Faults{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-attested:
	case <-time.After(5 * time.Second):
		t.Fatal("not attested once the validators returned")
	}
	if r, _ := n.Lookup(tx.Hash); len(r.Batch.Sigs) != 4 {
		t.Fatalf("%d signatures", len(r.Batch.Sigs))
	}
}

// TestProcessedDepositsBound: past ProcessedDepositsScanMax bridge records
// the set is refused, not truncated.
func TestProcessedDepositsBound(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir()))
	defer n.Close()
	id := func(i int) core.Hash { return core.Hash{31: byte(i + 1), 30: byte((i + 1) >> 8)} } // not 0: derived
	deposit := func(i int, done func(*Entry, error)) {
		if err := n.Deposit(id(i), core.NativeToken, DevAddress(1), uint256.NewInt(1), done); err != nil {
			t.Fatal(err)
		}
	}
	for i := range ProcessedDepositsScanMax - 1 {
		deposit(i, func(*Entry, error) {})
	}
	waitDeposit := func(i int) {
		attested := make(chan struct{})
		deposit(i, func(*Entry, error) {})
		n.OnAttested(id(i), func() { close(attested) })
		<-attested
	}
	waitDeposit(ProcessedDepositsScanMax - 1)
	if ids, err := n.ProcessedDeposits(); err != nil || len(ids) != ProcessedDepositsScanMax || ids[0] != id(0) || ids[len(ids)-1] != id(ProcessedDepositsScanMax-1) {
		t.Fatalf("%d deposits: %d ids %v", ProcessedDepositsScanMax, len(ids), err)
	}
	waitDeposit(ProcessedDepositsScanMax)
	if _, err := n.ProcessedDeposits(); !errors.Is(err, ErrTooManyDeposits) {
		t.Fatalf("one more: %v", err)
	}
}
