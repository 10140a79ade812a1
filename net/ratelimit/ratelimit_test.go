package ratelimit

import (
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestParseSpec: the --rate-limit flag's grammar, and its errors, each
// naming the key.
func TestParseSpec(t *testing.T) {
	c, err := ParseSpec("address=1200/60s,account=300/10s,account.burst=50,weight.eth_getLogs=20,weight.eth_chainId=0")
	if err != nil {
		t.Fatal(err)
	}
	if c.Address != (Bucket{1200, 20}) || c.Account != (Bucket{50, 30}) || c.Cancel != DefaultCancel ||
		c.Weights["eth_getLogs"] != 20 || c.Weights["eth_chainId"] != 0 || len(c.Weights) != 2 {
		t.Fatalf("parsed %+v", c)
	}
	if c, err := ParseSpec("account=10/1s,cancel=0/1s"); err != nil || c.Cancel.On() || c.Address.On() {
		t.Fatalf("cancel=0/1s: %+v %v, want no reserve", c, err)
	}
	for _, off := range []string{"", " ", "off"} {
		if c, err := ParseSpec(off); err != nil || c.On() {
			t.Fatalf("%q: %+v %v, want off", off, c, err)
		}
	}
	for _, bad := range []struct{ spec, want string }{
		{"address", `want key=value, got "address"`},
		{"address=10", `address: want N/PERIOD like 1200/60s`},
		{"address=-1/1s", `address: want N/PERIOD`},
		{"address=1000000001/1s", `address: want N/PERIOD`},
		{"address=10/1x", `address: want a PERIOD from 1ms to 24h like 60s, got "1x"`},
		{"address=10/25h", `address: want a PERIOD`},
		{"address=10/1s,address=5/1s", `address: given twice`},
		{"adress=10/1s", `adress: unknown key`},
		{"address=10/1s,account.burst=5", `account.burst: needs account=N/PERIOD`},
		{"address=10/1s,address.burst=x", `address.burst: want an integer`},
		{"address=10/1s,weight.eth_getLogs=10001", `weight.eth_getLogs: want an integer weight in [0, 10000]`},
		{"address=10/1s,weight.=1", `weight.: want a method name`},
		{"address=10/1s,weight.admin_deposit=1", `weight.admin_deposit: the lab_, admin_ and anvil controls are never limited`},
		{"cancel=10/1s", `address, account: name at least one of them`},
	} {
		_, err := ParseSpec(bad.spec)
		if err == nil || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q…", bad.spec, err, bad.want)
		}
	}
}

// TestTakeRefundsAndReserve: a call the account refuses charges the
// address nothing; a cancel-only call uses the reserve once the budget is
// spent, an other call does not.
func TestTakeRefundsAndReserve(t *testing.T) {
	l := New(Config{Address: Bucket{10, 1e-9}, Account: Bucket{2, 1e-9}, Cancel: Bucket{2, 1e-9}})
	ip, acct := netip.MustParseAddr("10.0.0.1"), [20]byte{1}
	if _, ok := l.Take(ip, &acct, 2, false); !ok {
		t.Fatal("first call refused")
	}
	if r, ok := l.Take(ip, &acct, 2, false); ok || r.Kind != KindAccount || r.RetryAfter <= 0 {
		t.Fatalf("over the account: %+v %v", r, ok)
	}
	if st, _ := l.AddressState(ip); st.Tokens < 7.99 || st.Tokens > 8.01 {
		t.Fatalf("address after a refusal by the account: %v, want 8 (given back)", st.Tokens)
	}
	if _, ok := l.Take(ip, &acct, 2, true); !ok {
		t.Fatal("a cancel within the reserve refused")
	}
	if st, _ := l.AccountState(acct); st.Tokens > 1e-6 || st.Reserve > 1e-6 {
		t.Fatalf("account after the cancel: %+v, want budget and reserve 0", st)
	}
	if r, ok := l.Take(ip, &acct, 2, true); ok || r.Kind != KindAccount {
		t.Fatalf("a cancel past the reserve: %+v %v", r, ok)
	}
	if r, ok := l.Take(ip, nil, 11, false); ok || r.RetryAfter >= 0 {
		t.Fatalf("a call beyond the capacity: %+v %v, want refused for ever", r, ok)
	}
}

// TestTableFullEvictsIdle: a full table gives a new key a bucket only once
// an idle bucket has refilled to full, and says how long until then.
func TestTableFullEvictsIdle(t *testing.T) {
	// 1 unit, refilled in 2 s: longer than filling the table takes, even
	// under the race detector on a busy machine (about 0.3 s).
	l := New(Config{Address: Bucket{1, 0.5}})
	for i := range KeysMax {
		if _, ok := l.Take(addrN(i), nil, 1, false); !ok {
			t.Fatalf("key %d refused", i)
		}
	}
	r, ok := l.Take(addrN(KeysMax), nil, 1, false)
	if ok || !r.TableFull || r.RetryAfter <= 0 || r.RetryAfter > 2*time.Second {
		t.Fatalf("a new key in a full table: %+v %v, want refused, retry in (0, 2 s]", r, ok)
	}
	if a, _ := l.Buckets(); a != KeysMax {
		t.Fatalf("%d buckets, want %d", a, KeysMax)
	}
	// The first buckets are full after r.RetryAfter, all of them 2 s after
	// the last was charged.
	time.Sleep(r.RetryAfter + 20*time.Millisecond)
	if _, ok := l.Take(addrN(KeysMax), nil, 1, false); !ok {
		t.Fatal("a new key once some idle buckets are full: refused")
	}
	if a, _ := l.Buckets(); a >= KeysMax {
		t.Fatalf("%d buckets after the sweep, want fewer than %d (the idle full ones evicted)", a, KeysMax)
	}
}

func addrN(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
}

// TestBytesPerBucket measures a live bucket's memory, map included, for
// both kinds, against BytesPerBucket.
func TestBytesPerBucket(t *testing.T) {
	for _, kind := range []string{"address", "account"} {
		l := New(Config{Address: Bucket{10, 1}, Account: Bucket{10, 1}})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range KeysMax {
			a := [20]byte{byte(i), byte(i >> 8), byte(i >> 16)}
			l.Take(addrN(i), &a, 1, false)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		per := float64(after.HeapAlloc-before.HeapAlloc) / 2 / KeysMax // two tables filled
		t.Logf("%s: %.1f bytes per bucket (both tables' average)", kind, per)
		if per > BytesPerBucket {
			t.Fatalf("%.1f bytes per bucket, over BytesPerBucket (%d)", per, BytesPerBucket)
		}
		runtime.KeepAlive(l)
	}
}

// BenchmarkTake: the check of a call that passes, on an existing bucket.
func BenchmarkTake(b *testing.B) {
	l := New(Config{Address: Bucket{CapacityMax, CapacityMax}, Account: Bucket{CapacityMax, CapacityMax}})
	ip, acct := netip.MustParseAddr("127.0.0.1"), [20]byte{1}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := l.Take(ip, &acct, 2, false); !ok {
			b.Fatal("refused")
		}
	}
}

// TestTakeConcurrent: goroutines charging one address (and one account)
// at once pass exactly as many calls as the budgets hold, no more: the
// compare-and-swap loses no charge and the account's refusals give the
// address back what it took.
func TestTakeConcurrent(t *testing.T) {
	// Nothing refills noticeably (1 unit an hour); the account holds 600
	// of the address's 1000.
	l := New(Config{Address: Bucket{1000, 1.0 / 3600}, Account: Bucket{600, 1.0 / 3600}})
	ip, acct := netip.MustParseAddr("10.0.0.1"), [20]byte{7}
	var passed, sends atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				var a *[20]byte
				if (g+i)%2 == 0 { // half the calls are sends by the account
					a = &acct
				}
				if _, ok := l.Take(ip, a, 1, false); ok {
					passed.Add(1)
					if a != nil {
						sends.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	if passed.Load() != 1000 || sends.Load() > 600 {
		t.Fatalf("%d calls passed (%d sends), want 1000 (at most 600 sends)", passed.Load(), sends.Load())
	}
}

// TestTakeStaleClock: a budget the load cannot spend (1 ms of burst at 10¹²
// units a second) refuses nothing, although goroutines that read the clock
// and were descheduled before they charged find the bucket's time moved
// past theirs (before the fix, about one call in 10⁵ on a busy machine).
func TestTakeStaleClock(t *testing.T) {
	c, err := ParseSpec("address=1000000000/1ms")
	if err != nil {
		t.Fatal(err)
	}
	l, ip := New(c), netip.MustParseAddr("127.0.0.1")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200_000 {
				if r, ok := l.Take(ip, nil, 1, false); !ok {
					t.Errorf("refused: %+v", r)
					return
				}
			}
		}()
	}
	wg.Wait()
}
