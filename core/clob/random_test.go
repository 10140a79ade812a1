package clob

import (
	"flag"
	"math/rand/v2"
	"testing"

	"github.com/holiman/uint256"
)

var randomSeeds = flag.Int("random.seeds", 30, "seeded streams in TestRandomInvariants")

// source draws choices: a seeded rand for TestRandomInvariants, the fuzz
// input for FuzzEngine.
type source interface{ pick(n int) int }

type randSource struct{ r *rand.Rand }

func (s randSource) pick(n int) int { return s.r.IntN(n) }

// byteSource reads choices from bytes; once they run out it says 0.
type byteSource struct {
	b []byte
	i int
}

func (s *byteSource) pick(n int) int {
	if s.i >= len(s.b) {
		return 0
	}
	v := int(s.b[s.i])
	s.i++
	if n > 256 && s.i < len(s.b) {
		v = v<<8 | int(s.b[s.i])
		s.i++
	}
	return v % n
}

func (s *byteSource) done() bool { return s.i >= len(s.b) }

var driverOwners = []string{"o1", "o2", "o3", "o4"}

// driver plays a stream of intents and ticks against a harness, which
// checks every invariant after every admission and tick.
type driver struct {
	h   *harness
	src source
	ids []string
}

func newDriver(t testing.TB, src source, l Limits) *driver {
	d := &driver{h: newHarness(t, l), src: src}
	for i, o := range driverOwners {
		d.h.fund(o, int64(50+200*i), int64(2_000+20_000*i))
	}
	return d
}

// step performs one random action.
func (d *driver) step() {
	h, src := d.h, d.src
	who := driverOwners[src.pick(len(driverOwners))]
	switch x := src.pick(100); {
	case x < 45:
		d.submit(who)
	case x < 55 && len(d.ids) > 0:
		name := d.ids[src.pick(len(d.ids))]
		h.admit(who, nil, Intent{Kind: IntentCancel, Book: tBookID, OrderID: h.id(name), Deadline: h.deadline()})
	case x < 68 && len(d.ids) > 0:
		name := d.ids[src.pick(len(d.ids))]
		h.admit(who, nil, Intent{Kind: IntentUpdate, Book: tBookID, OrderID: h.id(name), Size: lotsWei(int64(1 + src.pick(15))),
			Price: stepsWei(int64(90 + src.pick(21))), Deadline: h.deadline()})
	case x < 72:
		amt := uint256.NewInt(uint64(src.pick(1000)) * 1e12)
		to := owner(driverOwners[src.pick(len(driverOwners))])
		h.admit(who, nil, Intent{Kind: IntentTransfer, Token: tQuote, To: to, Amount: *amt,
			Deadline: uint64(landing(h.nowUs, TransferIntervalUs))})
	case x < 75:
		// Skip the due tick: intents whose deadline passes are dropped.
		T := landing(h.nowUs, h.iv) + int64(src.pick(3))*h.iv
		h.tick(T)
	default:
		d.runDue(int64(src.pick(2_500_000)))
	}
}

func (d *driver) submit(who string) {
	h, src := d.h, d.src
	in := h.limit(Side(src.pick(2)), int64(1+src.pick(20)), int64(90+src.pick(21)), 0)
	switch src.pick(10) {
	case 0:
		in.Type, in.Flags = Market, FlagIOC
	case 1:
		in.Flags = FlagIOC
	case 2, 3:
		in.Flags = FlagPostOnly
	}
	if src.pick(4) == 0 {
		in.TTL = uint64(1 + src.pick(4_000_000))
	}
	name := string(rune('A'+len(d.ids)%26)) + string(rune('0'+len(d.ids)/26%10)) + string(rune('a'+len(d.ids)/260%26))
	if in2 := in; src.pick(5) == 0 {
		in2.Side = 1 - in.Side
		in2.Price = stepsWei(int64(90 + src.pick(21)))
		if h.admit(who, []string{name, name + "'"}, in, in2) == OK {
			d.ids = append(d.ids, name, name+"'")
		}
		return
	}
	if h.admit(who, []string{name}, in) == OK {
		d.ids = append(d.ids, name)
	}
}

// runDue advances the clock and runs every due tick, as the node does.
func (d *driver) runDue(advanceUs int64) {
	h := d.h
	h.nowUs += advanceUs
	for {
		T, ok := h.e.NextTickDue(h.nowUs)
		if !ok {
			return
		}
		now := h.nowUs
		h.tick(T)
		h.nowUs = max(now, h.nowUs-100)
	}
}

func TestRandomInvariants(t *testing.T) {
	for seed := range uint64(*randomSeeds) {
		t.Run("", func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("seed %d", seed)
				}
			}()
			r := rand.New(rand.NewPCG(seed, 42))
			l := Limits{OrdersMax: 16 + r.IntN(200), PendingMax: 64}
			d := newDriver(t, randSource{r}, l)
			for range 3000 {
				d.step()
			}
			d.runDue(100_000_000)
			snap := d.h.e.AppendSnapshot(nil)
			if len(snap) == 0 {
				t.Fatal("empty snapshot")
			}
		})
	}
}

func FuzzEngine(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("\x00\x10\x05\x00\x01\x00\x00\x10\x05\x01\x00\x50\x00\x00\x63\x00\x63\x00"))
	f.Add([]byte("post only crossing each other, then a market order and a cancel"))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := &byteSource{b: data}
		d := newDriver(t, src, Limits{OrdersMax: 32, PendingMax: 16})
		for !src.done() {
			d.step()
		}
		d.runDue(100_000_000)
	})
}
