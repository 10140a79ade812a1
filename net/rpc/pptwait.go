package rpc

import (
	"container/heap"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/net/node"
)

// svc_waitPastPerfectTime [timestamp] (the live network's
// pod_waitPastPerfectTime): a long poll that answers null once the node's
// past-perfect time (svc_pastPerfectTime) reaches timestamp, in µs.
//
// A wait holds no worker and no goroutine. The lone call is answered
// through a deferred response (owe), as a lone send is: the event loop
// registers it with the Service's pptWaits and goes on. One goroutine
// (pptWaits.run) holds every waiter in a heap ordered by target and, while
// any waits, reads the past-perfect time (a few atomic loads) every
// min(time to the nearest target, pptPollMax), answering those it passed.
// A thousand waiters cost a thousand heap entries and timers, and one
// goroutine polling every few milliseconds.
//
// Bounds (docs/limits.md): a target more than PPTAheadMaxUs past the node's
// clock is refused at once, with the live network's message, which its
// Rust SDK retries on; at most Config.PPTWaitersMax waits are held for the
// whole node (-32005 beyond), and over WebSocket each holds one of its
// connection's Config.WSInFlightMax slots; a wait the past-perfect time does
// not reach within Config.PPTWaitMax (a manual clock nobody moves, a
// committee without a quorum of signers) is answered -32000. In a batch the
// method is refused: a batch answers as a whole, and holding it would hold
// the whole batch (docs/compat.md).

// PPTAheadMaxUs is how far past the node's clock a wait's target may be:
// the live network's "within ~500 ms of now".
const PPTAheadMaxUs = 500_000

// Defaults of Config.PPTWaitersMax and Config.PPTWaitMax.
const (
	DefaultPPTWaitersMax = 4096
	// DefaultPPTWaitMax: ten times the farthest target, so a live node
	// answers every wait long before it.
	DefaultPPTWaitMax = 5 * time.Second
)

// pptPollMax bounds the sleep between two readings of the past-perfect
// time while a wait is held: the time can jump (evm_increaseTime, a manual
// clock), and an attestation round can end before the clock's distance to
// the target says.
const pptPollMax = 5 * time.Millisecond

var (
	// pptTooFarMessage is the live network's, matched by its Rust SDK.
	pptTooFarMessage = "Requested PPT is too far in the future"
	errPPTInBatch    = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request",
		Data: []byte(`"svc_waitPastPerfectTime waits, so it must be sent alone, not in a batch"`)}
	errPPTTimestamp = jsonrpc.InvalidParams("timestamp: want an integer of microseconds since the Unix epoch, below 2^63")
)

// waitPastPerfectTime answers svc_waitPastPerfectTime.
func (c *call) waitPastPerfectTime(dst []byte) ([]byte, *jsonrpc.Error) {
	v := c.req.Param(0)
	if v == nil {
		return dst, missingParam(0)
	}
	target, err := jsonrpc.ParseQuantity(v)
	if err != nil || target > math.MaxInt64 {
		return dst, errPPTTimestamp
	}
	n := c.s.node
	if now := n.Clock().NowMicros(); int64(target) > now+PPTAheadMaxUs {
		return dst, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: pptTooFarMessage,
			Data: jsonrpc.AppendString(nil, "timestamp "+strconv.FormatUint(target, 10)+" is more than "+
				strconv.Itoa(PPTAheadMaxUs)+" µs past the node's time "+strconv.FormatInt(now, 10))}
	}
	if n.PastPerfectTime() >= int64(target) {
		return append(dst, "null"...), nil
	}
	if !c.lone {
		return dst, errPPTInBatch
	}
	w := &pptWaiter{targetUs: int64(target)}
	c.owe(&w.owed)
	if err := c.s.waits.hold(w); err != nil {
		w.fail(err)
	}
	return dst, errDeferred
}

// pptWaiter is one held wait.
type pptWaiter struct {
	owed
	targetUs int64
	index    int         // in pptWaits.heap; -1 once out of it
	timer    *time.Timer // answers the timeout; set with the push, under pptWaits.mu
}

// pptWaits holds the waits of the Service.
type pptWaits struct {
	node    *node.Node
	max     int
	timeout time.Duration
	errFull *jsonrpc.Error
	errLate *jsonrpc.Error

	mu   sync.Mutex
	heap pptHeap // guarded by mu
	wake chan struct{}
	quit chan struct{}
	done sync.WaitGroup
}

func newPPTWaits(n *node.Node, max int, timeout time.Duration) *pptWaits {
	p := &pptWaits{node: n, max: max, timeout: timeout,
		errFull: jsonrpc.LimitExceeded("too many svc_waitPastPerfectTime waits held on this node", max),
		errLate: &jsonrpc.Error{Code: -32000, Message: "past-perfect time did not reach the timestamp within " + timeout.String()},
		wake:    make(chan struct{}, 1), quit: make(chan struct{})}
	p.done.Add(1)
	go p.run()
	return p
}

// hold adds w, arms its timeout and wakes the poller, or refuses when max
// waits are held.
// REQUIRES: w's owed set: the poller may answer it at once.
func (p *pptWaits) hold(w *pptWaiter) *jsonrpc.Error {
	p.mu.Lock()
	if len(p.heap) >= p.max {
		p.mu.Unlock()
		return p.errFull
	}
	heap.Push(&p.heap, w)
	w.timer = time.AfterFunc(p.timeout, func() {
		if p.remove(w) {
			w.fail(p.errLate)
		}
	})
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return nil
}

// remove takes w out of the heap; false if it was out already.
func (p *pptWaits) remove(w *pptWaiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.index < 0 {
		return false
	}
	heap.Remove(&p.heap, w.index)
	return true
}

// run answers the waits whose target the past-perfect time reached.
func (p *pptWaits) run() {
	defer p.done.Done()
	t := time.NewTimer(time.Hour)
	t.Stop()
	var ready []*pptWaiter
	for {
		p.mu.Lock()
		sleep := time.Duration(-1)
		if len(p.heap) > 0 {
			ppt := p.node.PastPerfectTime()
			for len(p.heap) > 0 && p.heap[0].targetUs <= ppt {
				w := heap.Pop(&p.heap).(*pptWaiter)
				w.timer.Stop()
				ready = append(ready, w)
			}
			if len(p.heap) > 0 {
				sleep = min(time.Duration(p.heap[0].targetUs-ppt)*time.Microsecond, pptPollMax)
			}
		}
		p.mu.Unlock()
		for _, w := range ready {
			w.resolve(appendNull)
		}
		clear(ready)
		ready = ready[:0]
		if sleep >= 0 {
			t.Reset(sleep)
		}
		select {
		case <-p.wake:
		case <-t.C:
		case <-p.quit:
			return
		}
	}
}

func appendNull(dst []byte) []byte { return append(dst, "null"...) }

// close stops the poller and every timeout; the waits still held are not
// answered (the server is stopped).
func (p *pptWaits) close() {
	close(p.quit)
	p.done.Wait()
	p.mu.Lock()
	for _, w := range p.heap {
		w.timer.Stop()
	}
	p.mu.Unlock()
}

// pptHeap orders waits by target (container/heap).
type pptHeap []*pptWaiter

func (h pptHeap) Len() int           { return len(h) }
func (h pptHeap) Less(i, j int) bool { return h[i].targetUs < h[j].targetUs }
func (h pptHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *pptHeap) Push(x any) {
	w := x.(*pptWaiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *pptHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	w.index = -1
	*h = old[:len(old)-1]
	return w
}
