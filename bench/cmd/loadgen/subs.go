package main

// The subs scenario: S WebSocket subscribers of one channel on the WETH/USD
// dev market while a paced background driver sends crossing orders, so
// every tick has work. Per S and per permessage-deflate setting it measures
// notifications/s summed over the subscribers, the ticks covered, the
// tick→notification latency (receive wall time minus the tick time in the
// payload) and the bytes read from the socket per notification. Each run
// of ours is followed by one of the baseline (bench/baseline's gorilla
// WebSocket server, encoding/json per subscriber) with as many subscribers
// of the same setting: it broadcasts, at every tick boundary of its window,
// the payload of a notification our node sent in the run before, with the
// tick time set to that boundary, so both carry the same bytes.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/gorilla/websocket"
	"github.com/holiman/uint256"
	"github.com/valyala/fastjson"

	"github.com/ledgervenue/node/bench/baseline"
	"github.com/ledgervenue/node/bench/load"
	"github.com/ledgervenue/node/core/clob"
)

// Subs settings and bounds.
const (
	subsDefault        = "1,100,1000"
	subsMax            = 10_000 // subscribers of one run
	subsCountsMax      = 16     // values in -subs
	subsAccounts       = 4      // driver accounts: two buyers, two sellers
	subsRateDefault    = 50     // driver orders/s, over all its accounts
	subsRateMin        = 10     // so that every tick gets orders
	subsRateMax        = 5_000
	subsDepth          = 20 // svc_orderbook depth, and the resting levels per side
	subsRestGap        = 10 // steps from the mid to the nearest resting level
	subsDialWorkers    = 64 // concurrent dials + subscribes
	subsDialTimeout    = 10 * time.Second
	subsTailWait       = 5 * time.Second // after the window: for the last window tick to reach everyone
	subsWindowLead     = 50 * time.Millisecond
	subsDriverPastLast = 20 * time.Millisecond // the driver runs this far past the last window tick
	subsTicksKept      = 4096                  // in-window tick times kept per subscriber
	subsFDsPerSub      = 2                     // the client's socket and the server's, in one process
	subsFDsSpare       = 512
)

// subsChannels are the -channel values: the eth_subscribe type and the
// payload field holding the tick time in µs.
var subsChannels = map[string]struct{ typ, timeField string }{
	"orderbook": {"svc_orderbook", "timestamp"},
	"orders_v2": {"svc_orders_v2", "batch"},
}

// subsConfig is the subs options with their defaults applied.
type subsConfig struct {
	counts   []int
	channel  string // a key of subsChannels
	deflates []bool
	rate     int
}

// subsSettings parses the subs flags; empty values mean the defaults.
func (o *options) subsSettings() (subsConfig, error) {
	c := subsConfig{channel: o.channel, rate: o.subsRate}
	list := o.subs
	if list == "" {
		list = subsDefault
	}
	for f := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > subsMax {
			return c, fmt.Errorf("-subs must list subscriber counts in 1..%d, got %q", subsMax, list)
		}
		c.counts = append(c.counts, n)
	}
	if len(c.counts) > subsCountsMax {
		return c, fmt.Errorf("-subs lists at most %d counts, got %d", subsCountsMax, len(c.counts))
	}
	if c.channel == "" {
		c.channel = "orderbook"
	}
	if _, ok := subsChannels[c.channel]; !ok {
		return c, fmt.Errorf("-channel must be orderbook or orders_v2, got %q", o.channel)
	}
	switch o.deflate {
	case "", "both":
		c.deflates = []bool{false, true}
	case "off":
		c.deflates = []bool{false}
	case "on":
		c.deflates = []bool{true}
	default:
		return c, fmt.Errorf("-deflate must be off, on or both, got %q", o.deflate)
	}
	if c.rate == 0 {
		c.rate = subsRateDefault
	}
	if c.rate < subsRateMin || c.rate > subsRateMax {
		return c, fmt.Errorf("-subs-rate must be in %d..%d orders/s, got %d", subsRateMin, subsRateMax, c.rate)
	}
	return c, nil
}

// subsRun is what one run (one S, one deflate setting) measured. The window
// is `boundaries` consecutive tick boundaries; the figures marked "in the
// window" count notifications whose tick time lies in it.
type subsRun struct {
	subs       int
	deflate    bool
	base       bool          // a run of the baseline: no driver
	boundaries int           // tick boundaries in the window
	window     time.Duration // boundaries * the tick interval
	setup      time.Duration // dialling and subscribing everyone
	frames     int64         // notifications in the window, all subscribers
	ticks      int           // distinct tick times in the window seen by anyone
	lat        load.Histogram
	latMin     time.Duration
	// Over every notification read after the subscribe answer (in the
	// window or not): bytes read from the socket, JSON bytes after
	// decompression, and the count.
	wire, payload, all int64
	errors             int64 // read errors, close notifications, unexpected messages
	errorText          []string
	driver             *load.Result // the background orders; nil for the baseline
	driverRefused      []string
	sample             []byte // of ours: the first notification in the window
}

func (r *subsRun) rate() float64 { return float64(r.frames) / r.window.Seconds() }

// complete is the share of (subscriber, window tick) pairs notified.
func (r *subsRun) complete() float64 {
	if r.ticks == 0 {
		return 0
	}
	return float64(r.frames) / float64(r.subs*r.boundaries)
}

func (r *subsRun) wirePer() float64    { return perFrame(r.wire, r.all) }
func (r *subsRun) payloadPer() float64 { return perFrame(r.payload, r.all) }
func (r *subsRun) allErrors() int64 {
	if r.driver == nil {
		return r.errors
	}
	return r.errors + r.driver.Errors
}

func perFrame(bytes, frames int64) float64 {
	if frames == 0 {
		return 0
	}
	return float64(bytes) / float64(frames)
}

// subsCombo is the runs of one S and deflate setting: ours, and the
// baseline's.
type subsCombo struct {
	subs    int
	deflate bool
	runs    []*subsRun
	base    []*subsRun
}

// runSubs is the subs scenario for run: it fails if any run saw errors.
func runSubs(ctx context.Context, w io.Writer, e *env, o *options) error {
	_, err := subsScenario(ctx, w, e, o)
	return err
}

// subsScenario runs every S and deflate setting o.runs times (the settings
// alternate within a run index), prints each run, the medians and a table,
// and returns the runs.
func subsScenario(ctx context.Context, w io.Writer, e *env, o *options) ([]*subsCombo, error) {
	c, err := o.subsSettings()
	if err != nil {
		return nil, err
	}
	m := ordersMarket()
	ch := subsChannels[c.channel]
	modes := make([]string, len(c.deflates))
	for i, d := range c.deflates {
		modes[i] = deflateText(d)
	}
	depth := ""
	if c.channel == "orderbook" {
		depth = fmt.Sprintf(" (depth %d)", subsDepth)
	}
	fmt.Fprintf(w, "\n== subs: %s%s on %s (%s); S = %s subscribers, permessage-deflate %s; "+
		"each subscriber one gorilla/websocket connection and goroutine\n",
		ch.typ, depth, m.Name, hexID(m.ID), intsText(c.counts), strings.Join(modes, " and "))
	fmt.Fprintf(w, "  background driver: %d accounts sending %d limit IOC orders/s in all, crossing at 1..%d steps across %s; "+
		"window = whole %v ticks; latency = receive wall time - tick time %q of the payload\n",
		subsAccounts, c.rate, orderSpreadMax, priceText(&m, orderMidSteps), time.Duration(m.IntervalUs)*time.Microsecond, ch.timeField)
	need := subsFDsPerSub*slices.Max(c.counts) + subsFDsSpare
	note, err := raiseFileLimit(uint64(need))
	if err != nil {
		return nil, fmt.Errorf("%w (S=%d needs about %d: a client and a server socket per subscriber in this process)",
			err, slices.Max(c.counts), need)
	}
	if note != "" {
		fmt.Fprintf(w, "  %s\n", note)
	}
	ws, err := baseline.StartWS("127.0.0.1:0", ch.typ)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	fmt.Fprintf(w, "  baseline %s: net/http + gorilla/websocket, a writer goroutine per connection, the envelope encoded "+
		"with encoding/json per subscriber; at each %v boundary it broadcasts the payload of one of our notifications "+
		"with %q set to the boundary; ratios are baseline/ours for latency, ours/baseline for wire bytes\n",
		ws.Addr(), time.Duration(m.IntervalUs)*time.Microsecond, ch.timeField)
	stop, err := followWallClock(ctx, e)
	if err != nil {
		return nil, err
	}
	err = seedBook(ctx, w, e, o)
	var combos []*subsCombo
	if err == nil {
		combos, err = subsRuns(ctx, w, e, ws, o, &c)
	}
	if serr := stop(); err == nil && serr != nil {
		err = serr
	}
	if err != nil {
		return combos, err
	}
	printSubsTable(w, combos)
	var errs int64
	for _, cb := range combos {
		for _, r := range slices.Concat(cb.runs, cb.base) {
			errs += r.allErrors()
		}
	}
	if errs > 0 {
		return combos, fmt.Errorf("%d subscription or driver errors", errs)
	}
	return combos, nil
}

func subsRuns(ctx context.Context, w io.Writer, e *env, ws *baseline.WSServer, o *options, c *subsConfig) ([]*subsCombo, error) {
	if e.manual != nil {
		fmt.Fprintf(w, "  clock manual: moved to the wall time by admin_advanceTime every %v (latencies include that lag)\n", clockFollowEvery)
	}
	var combos []*subsCombo
	k := 0            // driver accounts are fresh for every run
	var sample []byte // the newest notification of ours, for the baseline
	for _, s := range c.counts {
		first := len(combos)
		for _, d := range c.deflates {
			combos = append(combos, &subsCombo{subs: s, deflate: d})
		}
		for i := range o.runs {
			for j := range c.deflates {
				cb := combos[first+j]
				k++
				r, err := subsOnce(ctx, e, o, c, s, cb.deflate, k)
				if err != nil {
					return combos, fmt.Errorf("S=%d deflate %s run %d: %w", s, deflateText(cb.deflate), i+1, err)
				}
				printSubsRun(w, fmt.Sprintf("run %d", i+1), r)
				cb.runs = append(cb.runs, r)
				if r.sample != nil {
					sample = r.sample
				}
				payload, err := samplePayload(sample)
				if err != nil {
					return combos, fmt.Errorf("S=%d deflate %s run %d: %w", s, deflateText(cb.deflate), i+1, err)
				}
				b, err := subsBaseOnce(ctx, ws, o, c, s, cb.deflate, payload)
				if err != nil {
					return combos, fmt.Errorf("S=%d deflate %s run %d baseline: %w", s, deflateText(cb.deflate), i+1, err)
				}
				printSubsRun(w, fmt.Sprintf("run %d", i+1), b)
				cb.base = append(cb.base, b)
			}
		}
		for _, cb := range combos[first:] {
			printSubsMedian(w, cb)
		}
	}
	return combos, nil
}

// subscriber is one WebSocket connection with one subscription, read by
// its own goroutine.
type subscriber struct {
	conn      *websocket.Conn
	counted   *countingConn
	afterSub  int64 // bytes read up to the subscribe answer
	wireEnd   int64 // bytes read when the last notification was returned
	all       int64
	payload   int64
	frames    int64
	lat       load.Histogram
	latMin    time.Duration
	ticks     []int64
	errors    int64
	errorText []string
	newest    atomic.Int64 // newest tick time notified, µs
	done      atomic.Bool  // the read loop ended
}

// subsWindow is the tick times [first, last] (µs) that count.
type subsWindow struct{ first, last int64 }

// subsShared is what the run's readers share.
type subsShared struct {
	timeField string
	window    atomic.Pointer[subsWindow] // nil until the driver starts
	stopping  atomic.Bool                // set before the connections are closed
	sample    atomic.Pointer[[]byte]     // the first notification in the window
}

// subsOnce funds and pre-signs the driver's orders (run index k), opens
// and subscribes s subscribers, runs the driver over a window of whole
// ticks, waits for the window's last tick to reach every subscriber, and
// closes them.
func subsOnce(ctx context.Context, e *env, o *options, c *subsConfig, s int, deflate bool, k int) (*subsRun, error) {
	m := ordersMarket()
	interval := time.Duration(m.IntervalUs) * time.Microsecond
	boundaries := max(1, int((o.duration+interval/2)/interval))
	// The driver runs at most 2 intervals past o.duration (alignment and
	// the lead); give each account its share of that.
	perAccount := int(math.Ceil(float64(c.rate)*(o.duration+2*interval).Seconds()/subsAccounts)) + 1
	keys, addrs := deriveKeys(o.seed+"/subs", k, subsAccounts)
	if err := depositAll(ctx, e.oursAddr, e.adminHeader(), orderFunding(&m, addrs, perAccount)); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(o.duration+orderDeadlineAhead).UnixMicro() / m.IntervalUs * m.IntervalUs
	bodies, err := signAll(keys, perAccount, func(account int, key *ecdsa.PrivateKey, signer types.Signer, nonce uint64) ([]byte, error) {
		return signedOrder(key, signer, nonce, orderIntent(&m, account, nonce, uint64(deadline)))
	})
	if err != nil {
		return nil, err
	}
	runtime.GC()

	sh := &subsShared{timeField: subsChannels[c.channel].timeField}
	start := time.Now()
	subs, err := openSubscribers(ctx, e.oursAddr, s, deflate, subscribeRequest(c.channel, m.ID))
	if err != nil {
		return nil, err
	}
	res := &subsRun{subs: s, deflate: deflate, boundaries: boundaries, window: time.Duration(boundaries) * interval,
		setup: time.Since(start)}
	var wg sync.WaitGroup
	for _, sub := range subs {
		wg.Go(func() { sub.read(sh) })
	}
	closeAll := func() {
		sh.stopping.Store(true)
		for _, sub := range subs {
			sub.conn.Close()
		}
		wg.Wait()
	}

	// The window: the first boundary at least subsWindowLead after the
	// driver starts (so it has orders), and the boundaries after it.
	driverStart := time.Now()
	firstUs := landing(driverStart.Add(subsWindowLead).UnixMicro()-1, m.IntervalUs)
	lastUs := firstUs + int64(boundaries-1)*m.IntervalUs
	sh.window.Store(&subsWindow{first: firstUs, last: lastUs})
	driverEnd := time.UnixMicro(lastUs).Add(subsDriverPastLast)
	refusals := refusalLog{max: shownErrors}
	res.driver, err = paceOrders(ctx, e, bodies, c.rate, driverStart, driverEnd, refusals.check)
	if err != nil {
		closeAll()
		return nil, err
	}
	res.driverRefused = refusals.first
	if err := checkNonces(e, addrs, res.driver); err != nil {
		closeAll()
		return nil, err
	}
	waitTail(ctx, subs, lastUs)
	closeAll()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res.collect(subs)
	if p := sh.sample.Load(); p != nil {
		res.sample = *p
	}
	return res, nil
}

// waitTail waits until every subscriber has the tick lastUs (µs), or gave
// up, or subsTailWait passed.
func waitTail(ctx context.Context, subs []*subscriber, lastUs int64) {
	give := time.Now().Add(subsTailWait)
	for time.Now().Before(give) && ctx.Err() == nil {
		behind := 0
		for _, sub := range subs {
			if !sub.done.Load() && sub.newest.Load() < lastUs {
				behind++
			}
		}
		if behind == 0 {
			break
		}
		_ = sleep(ctx, 10*time.Millisecond)
	}
}

// collect adds up what the subscribers measured, once they are closed.
func (res *subsRun) collect(subs []*subscriber) {
	seen := map[int64]bool{}
	res.latMin = time.Duration(math.MaxInt64)
	for _, sub := range subs {
		res.frames += sub.frames
		res.all += sub.all
		res.payload += sub.payload
		res.wire += sub.wireEnd - sub.afterSub
		res.lat.Merge(&sub.lat)
		if sub.frames > 0 {
			res.latMin = min(res.latMin, sub.latMin)
		}
		for _, t := range sub.ticks {
			seen[t] = true
		}
		res.errors += sub.errors
		for _, t := range sub.errorText {
			if len(res.errorText) < shownErrors {
				res.errorText = append(res.errorText, t)
			}
		}
	}
	if res.frames == 0 {
		res.latMin = 0
	}
	res.ticks = len(seen)
}

// samplePayload decodes the result of a notification into a map, numbers
// kept as they were written, so that encoding/json writes the same bytes
// up to the order of the keys.
func samplePayload(msg []byte) (map[string]any, error) {
	if msg == nil {
		return nil, errors.New("no notification of ours in the window to feed the baseline with")
	}
	var n struct {
		Params struct {
			Result json.RawMessage `json:"result"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &n); err != nil {
		return nil, fmt.Errorf("sample notification: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(n.Params.Result))
	d.UseNumber()
	var payload map[string]any
	if err := d.Decode(&payload); err != nil {
		return nil, fmt.Errorf("sample notification result: %w", err)
	}
	return payload, nil
}

// subsBaseOnce opens and subscribes s subscribers to the baseline ws and
// has it broadcast payload, with the tick time set, at every tick boundary
// of a window as long as ours; it waits for the window's last tick to
// reach every subscriber and closes them.
func subsBaseOnce(ctx context.Context, ws *baseline.WSServer, o *options, c *subsConfig, s int, deflate bool,
	payload map[string]any) (*subsRun, error) {
	m := ordersMarket()
	interval := time.Duration(m.IntervalUs) * time.Microsecond
	boundaries := max(1, int((o.duration+interval/2)/interval))
	// The previous run's connections are gone on the server too.
	for give := time.Now().Add(subsTailWait); ws.Subscriptions() > 0 && time.Now().Before(give); {
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return nil, err
		}
	}
	runtime.GC()

	sh := &subsShared{timeField: subsChannels[c.channel].timeField}
	start := time.Now()
	subs, err := openSubscribers(ctx, ws.Addr(), s, deflate, subscribeRequest(c.channel, m.ID))
	if err != nil {
		return nil, err
	}
	res := &subsRun{subs: s, deflate: deflate, base: true, boundaries: boundaries,
		window: time.Duration(boundaries) * interval, setup: time.Since(start)}
	var wg sync.WaitGroup
	for _, sub := range subs {
		wg.Go(func() { sub.read(sh) })
	}
	firstUs := landing(time.Now().Add(subsWindowLead).UnixMicro()-1, m.IntervalUs)
	lastUs := firstUs + int64(boundaries-1)*m.IntervalUs
	sh.window.Store(&subsWindow{first: firstUs, last: lastUs})
	for t := firstUs; t <= lastUs; t += m.IntervalUs {
		if sleep(ctx, time.Until(time.UnixMicro(t))) != nil {
			break
		}
		p := maps.Clone(payload)
		p[sh.timeField] = t
		ws.Broadcast(p)
	}
	waitTail(ctx, subs, lastUs)
	sh.stopping.Store(true)
	for _, sub := range subs {
		sub.conn.Close()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res.collect(subs)
	return res, nil
}

// seedBook rests subsDepth bids and as many asks, one lot each at
// consecutive steps from subsRestGap steps away from the mid, so the
// svc_orderbook payload carries full depth; the driver's IOC orders (at
// most orderSpreadMax steps away) never reach them. Once per scenario: the
// orders rest until the node closes.
func seedBook(ctx context.Context, w io.Writer, e *env, o *options) error {
	m := ordersMarket()
	keys, addrs := deriveKeys(o.seed+"/subs-book", 0, 2) // a buyer, a seller
	if err := depositAll(ctx, e.oursAddr, e.adminHeader(), orderFunding(&m, addrs, subsDepth)); err != nil {
		return err
	}
	deadline := time.Now().Add(orderDeadlineAhead).UnixMicro() / m.IntervalUs * m.IntervalUs
	bodies, err := signAll(keys, subsDepth, func(account int, key *ecdsa.PrivateKey, signer types.Signer, nonce uint64) ([]byte, error) {
		in := &clob.Intent{Kind: clob.IntentSubmit, Book: m.ID, Side: clob.Buy, Type: clob.Limit, Deadline: uint64(deadline)}
		steps := uint64(orderMidSteps - subsRestGap - nonce)
		if !isBuyer(account) {
			in.Side, steps = clob.Sell, orderMidSteps+subsRestGap+nonce
		}
		in.Size.Set(&m.LotSize)
		in.Price.Mul(uint256.NewInt(steps), &m.TickPrecision)
		return signedOrder(key, signer, nonce, in)
	})
	if err != nil {
		return err
	}
	refusals := refusalLog{max: shownErrors}
	r, err := load.Run(ctx, load.Config{Addr: e.oursAddr, Conns: 2, Pipeline: 1, Requests: 2 * subsDepth, Duration: time.Minute,
		Next: func(conn int, seq uint64) []byte {
			if seq < subsDepth {
				return bodies[conn][seq]
			}
			return nil
		},
		Check: refusals.check})
	switch {
	case err != nil:
		return err
	case r.Done != 2*subsDepth || r.Errors != 0:
		return fmt.Errorf("resting orders: %d of %d answered, %d errors; first: %s", r.Done, 2*subsDepth, r.Errors, strings.Join(refusals.first, " | "))
	}
	// They rest from their tick on: the next boundary, then durable.
	if err := sleep(ctx, time.Until(time.UnixMicro(landing(time.Now().UnixMicro(), m.IntervalUs)))+100*time.Millisecond); err != nil {
		return err
	}
	fmt.Fprintf(w, "  resting book: %d bids of 1 lot at %s..%s and %d asks at %s..%s (GTC, placed once)\n",
		subsDepth, priceText(&m, orderMidSteps-subsRestGap-subsDepth+1), priceText(&m, orderMidSteps-subsRestGap),
		subsDepth, priceText(&m, orderMidSteps+subsRestGap), priceText(&m, orderMidSteps+subsRestGap+subsDepth-1))
	return nil
}

// paceOrders sends bodies[account][nonce] from driverStart until end, each
// account on its own connection, spreading rate orders/s evenly over the
// accounts and over time.
func paceOrders(ctx context.Context, e *env, bodies [][][]byte, rate int, start, end time.Time,
	check func(status int, body []byte) bool) (*load.Result, error) {
	accounts := len(bodies)
	every := time.Duration(float64(time.Second) * float64(accounts) / float64(rate)) // per account
	return load.Run(ctx, load.Config{Addr: e.oursAddr, Conns: accounts, Pipeline: 1,
		Requests: int64(accounts * len(bodies[0])), Duration: time.Until(end),
		Next: func(conn int, seq uint64) []byte {
			if seq >= uint64(len(bodies[conn])) {
				return nil
			}
			at := start.Add(time.Duration(seq)*every + time.Duration(conn)*every/time.Duration(accounts))
			if !at.Before(end) || sleep(ctx, time.Until(at)) != nil {
				return nil
			}
			return bodies[conn][seq]
		},
		Check: check})
}

// subscribeRequest is the eth_subscribe message of every subscriber.
func subscribeRequest(channel string, book clob.Hash) []byte {
	params := `{"orderbook_ids":["` + hexID(book) + `"]`
	if channel == "orderbook" {
		params += `,"depth":` + strconv.Itoa(subsDepth)
	}
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["` + subsChannels[channel].typ + `",` + params + `}]}`)
}

// openSubscribers dials n WebSocket connections to addr (loopback only),
// each offering permessage-deflate when deflate is set, and subscribes each
// with req. It fails, closing what it opened, if any of them fails.
func openSubscribers(ctx context.Context, addr string, n int, deflate bool, req []byte) ([]*subscriber, error) {
	if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().IsLoopback() {
		return nil, fmt.Errorf("subscribers dial loopback addresses only, got %q", addr)
	}
	subs := make([]*subscriber, n)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, subsDialWorkers) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				subs[i], errs[i] = openSubscriber(ctx, addr, deflate, req)
			}
		})
	}
	wg.Wait()
	failed, first := 0, error(nil)
	for _, err := range errs {
		if err != nil {
			if failed == 0 {
				first = err
			}
			failed++
		}
	}
	if failed == 0 {
		return subs, nil
	}
	for _, s := range subs {
		if s != nil {
			s.conn.Close()
		}
	}
	return nil, fmt.Errorf("%d of %d subscribers could not connect and subscribe; first: %w", failed, n, first)
}

func openSubscriber(ctx context.Context, addr string, deflate bool, req []byte) (*subscriber, error) {
	s := &subscriber{}
	nd := net.Dialer{Timeout: subsDialTimeout}
	d := websocket.Dialer{HandshakeTimeout: subsDialTimeout, EnableCompression: deflate,
		NetDialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			c, err := nd.DialContext(ctx, network, address)
			if err != nil {
				return nil, err
			}
			s.counted = &countingConn{Conn: c}
			return s.counted, nil
		}}
	conn, resp, err := d.DialContext(ctx, "ws://"+addr+"/", http.Header{})
	if err != nil {
		return nil, fmt.Errorf("websocket dial: %w", err)
	}
	s.conn = conn
	if got := strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate"); got != deflate {
		conn.Close()
		return nil, fmt.Errorf("permessage-deflate offered %v, negotiated %v", deflate, got)
	}
	_ = conn.SetWriteDeadline(time.Now().Add(subsDialTimeout))
	_ = conn.SetReadDeadline(time.Now().Add(subsDialTimeout))
	if err := conn.WriteMessage(websocket.TextMessage, req); err != nil {
		conn.Close()
		return nil, fmt.Errorf("sending eth_subscribe: %w", err)
	}
	_, answer, err := conn.ReadMessage()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("reading the eth_subscribe answer: %w", err)
	}
	if v, err := fastjson.ParseBytes(answer); err != nil || v.GetInt("id") != 1 || len(v.GetStringBytes("result")) < 3 {
		conn.Close()
		return nil, fmt.Errorf("eth_subscribe answered %s", clip(answer, 300))
	}
	_ = conn.SetReadDeadline(time.Time{})
	s.afterSub = s.counted.n.Load()
	s.wireEnd = s.afterSub
	return s, nil
}

// read takes notifications until the connection fails or is closed.
func (s *subscriber) read(sh *subsShared) {
	defer s.done.Store(true)
	var p fastjson.Parser
	s.latMin = time.Duration(math.MaxInt64)
	for {
		_, msg, err := s.conn.ReadMessage()
		nowUs := time.Now().UnixMicro()
		if err != nil {
			if !sh.stopping.Load() {
				s.fail("read: %v", err)
			}
			return
		}
		s.wireEnd = s.counted.n.Load()
		s.all++
		s.payload += int64(len(msg))
		v, err := p.ParseBytes(msg)
		if err != nil {
			s.fail("undecodable message: %v: %s", err, clip(msg, 200))
			continue
		}
		params := v.Get("params")
		switch {
		case string(v.GetStringBytes("method")) != "eth_subscription" || params == nil:
			s.fail("unexpected message %s", clip(msg, 200))
			continue
		case params.Exists("error"):
			s.fail("close notification %s", clip(params.Get("error").MarshalTo(nil), 300))
			continue
		}
		res := params.Get("result")
		var tUs int64
		if res != nil {
			tUs = res.GetInt64(sh.timeField)
		}
		if tUs <= 0 {
			s.fail("notification without a tick time %q: %s", sh.timeField, clip(msg, 200))
			continue
		}
		if tUs > s.newest.Load() {
			s.newest.Store(tUs)
		}
		w := sh.window.Load()
		if w == nil || tUs < w.first || tUs > w.last {
			continue
		}
		if sh.sample.Load() == nil {
			sh.sample.CompareAndSwap(nil, &msg)
		}
		lat := time.Duration(nowUs-tUs) * time.Microsecond
		s.frames++
		s.lat.Record(lat)
		s.latMin = min(s.latMin, lat)
		if len(s.ticks) < subsTicksKept {
			s.ticks = append(s.ticks, tUs)
		}
	}
}

func (s *subscriber) fail(format string, args ...any) {
	s.errors++
	if len(s.errorText) < shownErrors {
		s.errorText = append(s.errorText, fmt.Sprintf(format, args...))
	}
}

// countingConn counts the bytes read from the socket: the wire size of
// the frames, compressed or not, with their headers.
type countingConn struct {
	net.Conn
	n atomic.Int64
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}

func printSubsRun(w io.Writer, label string, r *subsRun) {
	who, driver := "ours", "-"
	if r.base {
		who = "base"
	} else if r.driver != nil {
		driver = fmt.Sprintf("%.0f orders/s", r.driver.Rate())
	}
	fmt.Fprintf(w, "  S=%-5d deflate %-3s %-6s %s %9.1f notif/s  ticks %d/%d  complete %5.1f%%  tick→notif p50 %8v  p90 %8v  p99 %8v  max %8v  "+
		"wire %6.0f B/notif (json %.0f B)  setup %v  driver %s  errors %d\n",
		r.subs, deflateText(r.deflate), label, who, r.rate(), r.ticks, r.boundaries, 100*r.complete(),
		round(r.lat.Quantile(0.50)), round(r.lat.Quantile(0.90)), round(r.lat.Quantile(0.99)), round(r.lat.Max()),
		r.wirePer(), r.payloadPer(), round(r.setup), driver, r.allErrors())
	if r.frames > 0 && r.latMin <= 0 {
		fmt.Fprintf(w, "    some notifications arrived before their tick time (min %v): the sender's clock is ahead of the client's\n", r.latMin)
	}
	if len(r.errorText) > 0 {
		fmt.Fprintf(w, "    %d subscription errors; first: %s\n", r.errors, strings.Join(r.errorText, " | "))
	}
	if r.driver != nil && r.driver.Errors > 0 {
		first := strings.Join(r.driverRefused, " | ")
		if r.driver.FirstError != nil {
			first += " | " + r.driver.FirstError.Error()
		}
		fmt.Fprintf(w, "    driver: %d orders refused or unanswered; first: %s\n", r.driver.Errors, first)
	}
}

// subsMedians is the median of each figure over a combo's runs of one
// server.
type subsMedians struct {
	rate, complete, ticks, wire, payload float64
	p50, p90, p99, max                   time.Duration
	errors                               int64
	runs                                 int
}

func mediansOf(runs []*subsRun) subsMedians {
	med := func(f func(*subsRun) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		return medianOf(v)
	}
	q := func(x float64) time.Duration {
		return time.Duration(med(func(r *subsRun) float64 { return float64(r.lat.Quantile(x)) }))
	}
	s := subsMedians{rate: med((*subsRun).rate), complete: med((*subsRun).complete),
		ticks: med(func(r *subsRun) float64 { return float64(r.ticks) }),
		wire:  med((*subsRun).wirePer), payload: med((*subsRun).payloadPer),
		p50: q(0.50), p90: q(0.90), p99: q(0.99), max: time.Duration(med(func(r *subsRun) float64 { return float64(r.lat.Max()) })),
		runs: len(runs)}
	for _, r := range runs {
		s.errors += r.allErrors()
	}
	return s
}

// medians is ours.
func (cb *subsCombo) medians() subsMedians { return mediansOf(cb.runs) }

// subsRatios compares the medians of ours and the baseline: latency
// baseline/ours (above 1: ours is faster), bytes ours/baseline (below 1:
// ours sends fewer).
type subsRatios struct{ p50, p99, wire, payload float64 }

func (cb *subsCombo) ratios() (subsRatios, bool) {
	if len(cb.runs) == 0 || len(cb.base) == 0 {
		return subsRatios{}, false
	}
	o, b := mediansOf(cb.runs), mediansOf(cb.base)
	div := func(x, y float64) float64 {
		if y == 0 {
			return 0
		}
		return x / y
	}
	return subsRatios{p50: ratio(b.p50, o.p50), p99: ratio(b.p99, o.p99), wire: div(o.wire, b.wire), payload: div(o.payload, b.payload)}, true
}

func printSubsMedian(w io.Writer, cb *subsCombo) {
	for _, side := range []struct {
		who  string
		runs []*subsRun
	}{{"ours", cb.runs}, {"base", cb.base}} {
		if len(side.runs) == 0 {
			continue
		}
		s := mediansOf(side.runs)
		fmt.Fprintf(w, "  S=%-5d deflate %-3s median %s %9.1f notif/s  ticks %.0f/%d  complete %5.1f%%  tick→notif p50 %8v  p90 %8v  p99 %8v  max %8v  "+
			"wire %6.0f B/notif (json %.0f B)  errors %d (%d runs)\n",
			cb.subs, deflateText(cb.deflate), side.who, s.rate, s.ticks, side.runs[0].boundaries, 100*s.complete,
			round(s.p50), round(s.p90), round(s.p99), round(s.max), s.wire, s.payload, s.errors, s.runs)
	}
	if r, ok := cb.ratios(); ok {
		fmt.Fprintf(w, "  S=%-5d deflate %-3s ratio baseline/ours: tick→notif p50 %.2fx  p99 %.2fx;  ours/baseline: wire B/notif %.2fx (json %.2fx)\n",
			cb.subs, deflateText(cb.deflate), r.p50, r.p99, r.wire, r.payload)
	}
}

// printSubsTable prints the medians of every combo, ours and the
// baseline's, the ratios between them, and what deflate saved where both
// settings ran.
func printSubsTable(w io.Writer, combos []*subsCombo) {
	fmt.Fprintf(w, "\n  subs medians     S  deflate  server    notif/s  complete       p50       p90       p99       max   wire B/notif  json B/notif  errors"+
		"   p50 b/o   p99 b/o  wire o/b\n")
	wire := map[int]map[bool]float64{}
	for _, cb := range combos {
		if len(cb.runs) == 0 {
			continue
		}
		r, ok := cb.ratios()
		for _, side := range []struct {
			who  string
			runs []*subsRun
		}{{"ours", cb.runs}, {"baseline", cb.base}} {
			if len(side.runs) == 0 {
				continue
			}
			s := mediansOf(side.runs)
			ratios := ""
			if ok && side.who == "ours" {
				ratios = fmt.Sprintf("  %7.2fx  %7.2fx  %7.2fx", r.p50, r.p99, r.wire)
			}
			fmt.Fprintf(w, "  %18d  %-7s  %-8s %10.1f  %7.1f%%  %8v  %8v  %8v  %8v  %13.0f  %12.0f  %6d%s\n",
				cb.subs, deflateText(cb.deflate), side.who, s.rate, 100*s.complete,
				round(s.p50), round(s.p90), round(s.p99), round(s.max), s.wire, s.payload, s.errors, ratios)
		}
		if wire[cb.subs] == nil {
			wire[cb.subs] = map[bool]float64{}
		}
		wire[cb.subs][cb.deflate] = cb.medians().wire
	}
	fmt.Fprintf(w, "  (p50, p99 b/o: baseline/ours latency, above 1 = ours faster; wire o/b: ours/baseline bytes per notification)\n")
	for _, cb := range combos {
		if ws := wire[cb.subs]; cb.deflate && ws[false] > 0 && ws[true] > 0 {
			fmt.Fprintf(w, "  S=%d: permessage-deflate carries %.0f%% of the uncompressed bytes on the wire\n", cb.subs, 100*ws[true]/ws[false])
		}
	}
}

func deflateText(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func hexID(id clob.Hash) string { return fmt.Sprintf("0x%x", id[:]) }

func intsText(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// errFileLimit: the hard limit on open files is too low for the run.
var errFileLimit = errors.New("the open-file limit is too low")
