package subs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

// The tick codec (core/tickrec) is tested here, through its exported API,
// because its inputs are the hub tests' ticks: the synthetic ones of the
// tick builder and the engine generator's (tickgen_test.go), which the
// replay tests share; the hub's stored ticks must survive it exactly.

// codecTicks are the hub tests' synthetic ticks plus real ticks from the
// engine generator.
func codecTicks() []*tickrec.Tick {
	a, b := addr(1), addr(2)
	out := []*tickrec.Tick{
		benchTick(),
		newTick(1000).t, // nothing ran
		newTick(2000).book(bookID(1), false, nil).book(bookID(2), true, nil).t,
		newTick(3000).transfer(a, b, 5).transfer(b, a, 1<<62).t,
		perpTestTick(3500, a, 1950),
	}
	tk := newTick(4000).book(bookID(1), true, []marketdata.OrderMeta{meta(1, bookID(1), a, clob.Sell)},
		clob.Event{Kind: clob.EventUpdate, OrderID: orderID(8), Owner: b}).t
	tk.Books[0].Touched = []marketdata.OrderMeta{meta(8, bookID(1), b, clob.Buy)}
	tk.Books[0].Modified = []tickrec.Modification{{OrderID: orderID(8), Price: w(2100), Size: w(1)}}
	tk.Positions = []tickrec.AccountPositions{{Account: a, Data: marketdata.PositionsData{Spot: []marketdata.Position{{Book: bookID(1), BaseSymbol: "WETH",
		QuoteSymbol: "USD", Balance: w(1), Free: w(1), MarkPrice: w(2000), HasMark: true}}}}, {Account: b}}
	tk.Withdrawals = []tickrec.Withdrawal{{Account: a, JSON: []byte(`{"withdrawer":"a"}`)}}
	tk.Result.Landed = []uint64{0, 7, 1 << 63}
	out = append(out, tk)
	g := newTickGen(7, 3, 16)
	return append(out, g.ticks(40, 30)...)
}

// emptyToNil sets every empty slice reachable from v to nil, as DecodeTick
// leaves them: AppendTick does not tell nil from empty.
func emptyToNil(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			emptyToNil(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			emptyToNil(v.Field(i))
		}
	case reflect.Slice:
		if v.Len() == 0 && !v.IsNil() && v.CanSet() {
			v.SetZero()
		}
		for i := range v.Len() {
			emptyToNil(v.Index(i))
		}
	}
}

// roundTrip checks DecodeTick(AppendTick(t)) against t, field by field,
// and that the decoded tick re-encodes to the same bytes.
func roundTrip(t *testing.T, tk *tickrec.Tick) []byte {
	t.Helper()
	enc := tickrec.AppendTick(nil, tk)
	got, err := tickrec.DecodeTick(enc)
	if err != nil {
		t.Fatalf("tick %d: %v", tk.TickUs, err)
	}
	want := deepCopy(tk)
	emptyToNil(reflect.ValueOf(want))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tick %d: decoded differs: %s", tk.TickUs, firstDiff("", reflect.ValueOf(got), reflect.ValueOf(want)))
	}
	if again := tickrec.AppendTick(nil, got); !bytes.Equal(again, enc) {
		t.Fatalf("tick %d: re-encoding differs", tk.TickUs)
	}
	return enc
}

// deepCopy copies a tick through the codec's opposite: reflection, so the
// test does not trust the code it checks.
func deepCopy[T any](v *T) *T {
	out := new(T)
	copyValue(reflect.ValueOf(out).Elem(), reflect.ValueOf(v).Elem())
	return out
}

func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if !src.IsNil() {
			dst.Set(reflect.New(src.Type().Elem()))
			copyValue(dst.Elem(), src.Elem())
		}
	case reflect.Struct:
		for i := range src.NumField() {
			copyValue(dst.Field(i), src.Field(i))
		}
	case reflect.Slice:
		if !src.IsNil() {
			dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Len()))
			for i := range src.Len() {
				copyValue(dst.Index(i), src.Index(i))
			}
		}
	default:
		dst.Set(src)
	}
}

func TestTickCodecRoundTrip(t *testing.T) {
	for _, tk := range codecTicks() {
		roundTrip(t, tk)
	}
}

// TestTickCodecEveryField fills every field of a Tick, and of everything it
// references, with random values by reflection: a field added to Tick,
// clob.Event, marketdata.Market (…) that the codec does not carry fails here.
func TestTickCodecEveryField(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		tk := &tickrec.Tick{}
		fillRandom(rng, reflect.ValueOf(tk).Elem(), 0)
		makeValid(rng, tk)
		if err := tickrec.Check(tk); err != nil {
			t.Fatalf("seed %d: generator made an invalid tick: %v", seed, err)
		}
		roundTrip(t, tk)
	}
}

// fillRandom sets v to random values, a quarter of them zero.
func fillRandom(rng *rand.Rand, v reflect.Value, depth int) {
	if rng.IntN(4) == 0 && v.Kind() != reflect.Struct && v.Kind() != reflect.Array {
		v.SetZero()
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(rng.Uint64()) >> rng.IntN(64))
	case reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		v.SetUint(rng.Uint64() >> rng.IntN(64))
	case reflect.String:
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		v.SetString(string(b))
	case reflect.Array:
		for i := range v.Len() {
			fillRandom(rng, v.Index(i), depth)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fillRandom(rng, v.Field(i), depth)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillRandom(rng, v.Elem(), depth+1)
	case reflect.Slice:
		n := 1 + rng.IntN(4)
		if depth > 2 {
			n = 1
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fillRandom(rng, v.Index(i), depth+1)
		}
	default:
		panic("fillRandom: unhandled kind " + v.Kind().String())
	}
}

// The trigger types and groupings the engine takes, whatever their values,
// and the order flags it admits.
var (
	orderFlags   = clob.FlagReduceOnly | clob.FlagIOC | clob.FlagPostOnly
	triggerTypes = [2]uint8{clob.TriggerTakeProfit, clob.TriggerStopLoss}
	groupings    = [2]uint8{clob.GroupingNone, clob.GroupingAsset}
)

// makeValid brings a random tick within what AppendTick requires and
// DecodeTick accepts (structure and enum ranges), leaving the rest random.
func makeValid(rng *rand.Rand, t *tickrec.Tick) {
	n := min(len(t.Books), len(t.Result.Books))
	t.Books, t.Result.Books = t.Books[:n], t.Result.Books[:n]
	for i := range t.Result.Books {
		bt := &t.Result.Books[i]
		bt.FirstEvent = rng.IntN(len(t.Result.Events) + 1)
		bt.EndEvent = bt.FirstEvent + rng.IntN(len(t.Result.Events)-bt.FirstEvent+1)
		t.Books[i].Kind %= clob.Perp + 1
		if s := &t.Books[i].Snapshot; !s.HasPerp {
			s.Perp = clob.PerpInfo{}
		} else {
			s.Perp.Book = s.Book
			noNegativeZero(&s.Perp.FundingRate, &s.Perp.FundingIndex)
		}
		for _, ms := range [][]marketdata.OrderMeta{t.Books[i].Created, t.Books[i].Touched} {
			for j := range ms {
				ms[j].Side %= clob.Sell + 1
				ms[j].Type %= clob.Market + 1
				ms[j].Flags &= orderFlags
				if rng.IntN(2) == 0 {
					ms[j].Signer = ms[j].Owner
				}
				ms[j].Kind %= marketdata.KindTriggered + 1
				ms[j].TriggerType = triggerTypes[ms[j].TriggerType%2]
				ms[j].Grouping = groupings[ms[j].Grouping%2]
				if ms[j].Kind == marketdata.KindUserSigned {
					ms[j].TriggerType, ms[j].Grouping = 0, 0
				} else {
					ms[j].TxHash = clob.Hash{} // engine-made: no transaction
				}
			}
		}
	}
	for i := range t.Result.Events {
		e := &t.Result.Events[i]
		e.Kind = clob.EventKind(1 + uint(e.Kind)%uint(clob.EventMarginCancel))
		e.Side %= clob.Sell + 1
		noNegativeZero(&e.Position, &e.Realized)
	}
	for i := range t.Markets {
		m := &t.Markets[i]
		if m.Config == nil {
			m.Config = &clob.MarketConfig{}
		}
		m.Config.Kind %= clob.Perp + 1
		if m.Config.Kind != clob.Perp {
			m.Config.Perp, m.Perp, m.HasPerp, m.MaxLeverage = clob.PerpParams{}, clob.PerpInfo{}, false, 0
		} else if !m.HasPerp {
			m.Perp, m.MaxLeverage = clob.PerpInfo{}, 0
		} else {
			m.MaxLeverage = m.Config.Perp.MaxLeverage
			m.Perp.Book = m.Config.ID
			noNegativeZero(&m.Perp.FundingRate, &m.Perp.FundingIndex)
		}
	}
	for i := range t.Positions {
		d := &t.Positions[i].Data
		for j := range d.Perps {
			p := &d.Perps[j]
			noNegativeZero(&p.Size, &p.Cost, &p.Unrealized, &p.Realized, &p.Funding, &p.EntryFundingIx)
		}
		if !d.HasMargin {
			d.Margin = clob.MarginInfo{}
		}
		noNegativeZero(&d.Margin.Cash, &d.Margin.Equity, &d.Margin.Unrealized, &d.Margin.Realized)
	}
	for i := range t.Triggers {
		for j := range t.Triggers[i].Triggers {
			tr := &t.Triggers[i].Triggers[j]
			tr.Info.Side %= clob.Sell + 1
			tr.Info.TriggerType = triggerTypes[tr.Info.TriggerType%2]
			tr.Info.Grouping = groupings[tr.Info.Grouping%2]
			tr.Info.Flags &= orderFlags
			if !tr.HasTx {
				tr.TxHash = clob.Hash{}
			}
		}
	}
}

func noNegativeZero(vs ...*clob.Signed) {
	for _, v := range vs {
		v.Neg = v.Neg && !v.Abs.IsZero()
	}
}

// Every proper prefix of an encoding is refused: nothing is optional. (The
// synthetic ticks: the generator's are tens of kB, too many decodes.)
func TestDecodeTickPrefixes(t *testing.T) {
	for _, tk := range codecTicks()[:5] {
		enc := tickrec.AppendTick(nil, tk)
		for i := range enc {
			if _, err := tickrec.DecodeTick(enc[:i]); err == nil {
				t.Fatalf("tick %d: prefix of %d/%d bytes decoded", tk.TickUs, i, len(enc))
			}
		}
	}
}

// Every single-byte change either is refused or decodes to a tick that
// re-encodes to the changed bytes (no second encoding of any value).
func TestDecodeTickByteFlips(t *testing.T) {
	for _, tk := range codecTicks()[:5] {
		enc := tickrec.AppendTick(nil, tk)
		buf := make([]byte, len(enc))
		for i := range enc {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				copy(buf, enc)
				buf[i] ^= x
				checkCanonical(t, buf)
			}
		}
	}
}

func checkCanonical(t *testing.T, b []byte) {
	t.Helper()
	in := bytes.Clone(b)
	got, err := tickrec.DecodeTick(b)
	if err != nil {
		return
	}
	for i := range b { // the tick must not alias its input
		b[i] = 0xa5
	}
	if again := tickrec.AppendTick(nil, got); !bytes.Equal(again, in) {
		t.Fatalf("decoded, but re-encodes differently:\n in  %x\n out %x", in, again)
	}
}

func TestDecodeTickRefuses(t *testing.T) {
	// A tick with one event (book, token and to present) and one book.
	tk := newTick(1000).book(bookID(1), true, nil, clob.Event{Kind: clob.EventFill, OrderID: orderID(1), Owner: addr(1), Base: w(2)}).t
	tk.Result.Events[0].Token, tk.Result.Events[0].To = addr(2), addr(3)
	enc := tickrec.AppendTick(nil, tk)
	if _, err := tickrec.DecodeTick(enc); err != nil {
		t.Fatal(err)
	}
	// version, tickUs, hashes, result tickUs, nEvents
	ev := 1 + 2*len(binary.AppendVarint(nil, tk.TickUs)) + 32 + 32 + 1
	if enc[ev-1] != 1 || enc[ev] != byte(clob.EventFill) {
		t.Fatalf("layout moved: %x", enc[:ev+1])
	}
	f := func(name, want string, edit func(b []byte) []byte) {
		t.Helper()
		b := edit(bytes.Clone(enc))
		_, err := tickrec.DecodeTick(b)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: err %v, want %q", name, err, want)
		}
	}
	f("version", "version 4", func(b []byte) []byte { b[0] = 4; return b })
	f("trailing", "1 trailing bytes", func(b []byte) []byte { return append(b, 0) })
	f("long varint", "shortest form", func(b []byte) []byte {
		// nEvents 1 as 0x81 0x00.
		return append(append(b[:ev-1:ev-1], 0x81, 0x00), b[ev:]...)
	})
	f("event kind 0", "event kind 0", func(b []byte) []byte { b[ev] = 0; return b })
	f("event kind past the last", "event kind 12", func(b []byte) []byte { b[ev] = byte(clob.EventMarginCancel) + 1; return b })
	f("side", "side 2", func(b []byte) []byte { b[ev+1] = 2; return b })
	f("flags", "flags 0x5c outside", func(b []byte) []byte { b[ev+2] |= 0x40; return b })
	f("zero book", "event book flagged present but zero", func(b []byte) []byte {
		clear(b[ev+3 : ev+3+32])
		return b
	})
	u := ev + 3 + 32 + 32 + 20 // the event's base amount: 2 whole tokens, 8 bytes
	if b := enc[u]; b != 8 {
		t.Fatalf("layout moved: base length %d", b)
	}
	f("u256 leading zero", "leading zero", func(b []byte) []byte {
		return append(append(b[:u:u], 9, 0), b[u+1:]...)
	})
	f("u256 too long", "u256 of 33 bytes", func(b []byte) []byte { b[u] = 33; return b })
	f("huge count", "count", func(b []byte) []byte {
		return append(binary.AppendUvarint(b[:ev-1:ev-1], 1<<40), b[ev:]...)
	})
	f("truncated", "truncated", func(b []byte) []byte { return b[:len(b)-1] })

	// Structure: a book's event range outside the events. Find EndEvent's
	// byte by encoding the same tick with an empty range.
	empty := deepCopy(tk)
	empty.Result.Books[0].EndEvent = 0
	at := -1
	for i, b := range tickrec.AppendTick(nil, empty) {
		if b != enc[i] {
			at = i
		}
	}
	if at < 0 || enc[at] != 1 {
		t.Fatalf("EndEvent not found at %d", at)
	}
	f("event range", "events [0, 2) outside the tick's 1", func(b []byte) []byte { b[at] = 2; return b })
	f("empty", "truncated", func([]byte) []byte { return nil })
}

func TestAppendTickRefusesInvalid(t *testing.T) {
	f := func(name string, edit func(*tickrec.Tick)) {
		t.Helper()
		tk := newTick(1000).book(bookID(1), true, nil, clob.Event{Kind: clob.EventCancel}).t
		edit(tk)
		defer func() {
			if r := recover(); r == nil || !strings.HasPrefix(r.(string), "BUG: tickrec.AppendTick: ") {
				t.Fatalf("%s: recovered %v", name, r)
			}
		}()
		tickrec.AppendTick(nil, tk)
	}
	f("books", func(tk *tickrec.Tick) { tk.Books = nil })
	f("range", func(tk *tickrec.Tick) { tk.Result.Books[0].EndEvent = 2 })
	f("negative", func(tk *tickrec.Tick) { tk.Result.Books[0].FirstEvent = -1 })
	f("config", func(tk *tickrec.Tick) { tk.Markets[0].Config = nil })
}

// FuzzDecodeTick: whatever DecodeTick accepts re-encodes to the same bytes
// and does not alias its input; nothing panics. The input is one whole
// encoding (the codec is not a stream, so there is no split point to feed
// it at; TestDecodeTickPrefixes covers every cut).
//
// The seeds are small, yet hold every kind of record: the fuzzer minimizes
// every new input it finds, which took 12 s on a 2 kB real tick (and the
// fuzzer runs nothing else meanwhile).
func FuzzDecodeTick(f *testing.F) {
	for _, tk := range codecTicks()[1:5] { // 75 to 1032 bytes
		f.Add(tickrec.AppendTick(nil, tk))
	}
	g := newTickGen(5, 1, 2)
	for range 3 {
		if enc := tickrec.AppendTick(nil, g.next(1)); len(enc) < 1200 {
			f.Add(enc)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{tickrec.Version})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkCanonical(t, bytes.Clone(b)) // it scribbles on its input
	})
}

// firstDiff names the first field where a and b differ (the decoded and
// the expected tick print as pages of numbers otherwise).
func firstDiff(path string, a, b reflect.Value) string {
	if a.Kind() != b.Kind() {
		return path + " kind"
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			return path + " nil"
		}
		if a.IsNil() {
			return ""
		}
		return firstDiff(path, a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if d := firstDiff(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s len %d vs %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := firstDiff(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
	default:
		if fmt.Sprint(a.Interface()) != fmt.Sprint(b.Interface()) {
			return fmt.Sprintf("%s: %v vs %v", path, a.Interface(), b.Interface())
		}
	}
	return ""
}
