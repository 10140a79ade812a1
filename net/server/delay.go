package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// Held-back delivery, for the strategy lab's latency rules (docs/lab.md,
// "Delivery faults"). The handler says how long an answer or a
// notification is to be held; the transport holds it without blocking a
// loop and without reordering a connection:
//
//   - HTTP: Response.Delay before the answer is ready. The answer becomes
//     a deferred one written a timer's delay after it is complete, so the
//     connection's later requests wait behind it as behind any deferred
//     answer (doc.go's invariant): pipelined answers keep their order, and
//     each waits for the one before it.
//   - WebSocket: a connection that was once asked to hold a message gets a
//     delay line, a FIFO with one timer. Every message of the connection
//     (answers, notifications, close notifications) goes through it while
//     it holds anything: a message leaves at its due time or the previous
//     one's, whichever is later, as bytes on one TCP connection do. A
//     message with no delay and nothing held goes out as before.
//
// Bounds. A held message counts in its connection's backlog (WSConn's
// queued bytes) from the moment it is held: Send refuses past
// Config.OutboundMax (the hub closes the subscription -32022, as for a
// slow reader), SendOwed closes the connection past twice it, and a
// connection past it is closed at its next message, as a client that does
// not read. Over all connections at most DelayedTotalMax bytes are held:
// past it a message is held no longer than the one before it (it keeps its
// place). One delay is at most DelayMax. Timers: one per connection with
// a delay line or a held HTTP answer.

const (
	// DelayMax bounds one message's delay; a longer one is cut to it.
	DelayMax = time.Minute
	// DelayedTotalMax bounds the bytes held back over all connections.
	DelayedTotalMax = 64 << 20
)

// Delay holds the response back for d (at most DelayMax) once it is
// complete, deferred or not. Call it before Defer.
// REQUIRES: called during Serve, on the event loop.
func (w *Response) Delay(d time.Duration) { w.delay = min(d, DelayMax) }

// ConnID is the connection's id: unique on this server, from 1, never
// reused; 0 for a Response not from a connection (a test's). Safe during
// Serve.
func (w *Response) ConnID() uint64 {
	if w.cs == nil {
		return 0
	}
	return w.cs.id
}

// ID is the connection's id, as Response.ConnID for the HTTP requests
// before the upgrade. Safe from any goroutine.
func (c *WSConn) ID() uint64 { return c.cs.id }

// RemoteAddr is the peer's address and port. Safe from any goroutine.
func (c *WSConn) RemoteAddr() string { return c.cs.conn.RemoteAddr().String() }

// Drop closes the connection at once, without a close frame: its client
// sees the TCP connection end. What is queued is lost, but for what the
// socket takes before the close runs on the loop. Safe from any goroutine.
func (c *WSConn) Drop() {
	if c.closed.Swap(true) {
		return
	}
	c.cs.srv.life.RLock()
	defer c.cs.srv.life.RUnlock()
	if !c.cs.srv.life.stopped {
		_ = c.cs.conn.Close()
	}
}

// hold counts n bytes against DelayedTotalMax, or reports false.
func (s *Server) hold(n int) bool {
	if s.delayed.Add(int64(n)) > DelayedTotalMax {
		s.delayed.Add(-int64(n))
		return false
	}
	return true
}

func (s *Server) release(n int) { s.delayed.Add(-int64(n)) }

// DelayedBytes returns the bytes held back over all connections.
func (s *Server) DelayedBytes() int64 { return s.delayed.Load() }

// delayLine is a WebSocket connection's FIFO of held messages.
type delayLine struct {
	c  *WSConn
	mu sync.Mutex
	// items are the held messages, oldest first; each is due at or after
	// the one before it.
	items   []heldMsg
	lastDue time.Time
	timer   *time.Timer
	// busy counts the messages held or handed to the loop and not yet
	// written: while it is not 0 a message without delay goes behind them.
	busy atomic.Int64
}

type heldMsg struct {
	due  time.Time
	bufs [][]byte
	n    int64 // bytes, counted in the connection's queued
	held bool  // counted in Server.delayed
}

// lineOf returns c's delay line, creating it.
func (c *WSConn) lineOf() *delayLine {
	if l := c.line.Load(); l != nil {
		return l
	}
	c.line.CompareAndSwap(nil, &delayLine{c: c})
	return c.line.Load()
}

// ReplyAfter is Reply held back for d.
// REQUIRES: on the connection's loop, during ServeWS.
func (c *WSConn) ReplyAfter(d time.Duration, msg []byte) {
	l := c.line.Load()
	if d <= 0 && l == nil {
		c.reply(msg)
		return
	}
	l = c.lineOf()
	l.mu.Lock()
	defer l.mu.Unlock()
	if d <= 0 && l.busy.Load() == 0 {
		c.reply(msg) // nothing held: it goes out with the read's write
		return
	}
	c.mu.Lock()
	frame := c.appendMessage(nil, msg)
	c.mu.Unlock()
	l.put(d, [][]byte{frame}, int64(len(frame)))
}

// SendAfter is Send held back for d.
func (c *WSConn) SendAfter(d time.Duration, parts ...[]byte) bool {
	l := c.line.Load()
	if d <= 0 && l == nil {
		return c.send(parts)
	}
	bufs, n, ok := c.admit(parts)
	return ok && c.lineOf().send(d, bufs, n)
}

// SendOwedAfter is SendOwed held back for d.
func (c *WSConn) SendOwedAfter(d time.Duration, msg []byte) bool {
	l := c.line.Load()
	if d <= 0 && l == nil {
		return c.sendOwed(msg)
	}
	frame, ok := c.owedFrame(msg)
	if !ok {
		return false
	}
	return c.lineOf().send(d, [][]byte{frame}, int64(len(frame)))
}

// send queues one framed message: at once when it has no delay and
// nothing is held, else held.
func (l *delayLine) send(d time.Duration, bufs [][]byte, n int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d <= 0 && l.busy.Load() == 0 {
		return l.c.write(bufs, n)
	}
	l.put(d, bufs, n)
	return true
}

// put holds one message, due d from now but not before the previous one.
// REQUIRES: l.mu held.
func (l *delayLine) put(d time.Duration, bufs [][]byte, n int64) {
	now := time.Now()
	srv := l.c.cs.srv
	m := heldMsg{bufs: bufs, n: n}
	m.held = d > 0 && srv.hold(int(n))
	due := now
	if m.held {
		due = now.Add(min(d, DelayMax))
	}
	if due.Before(l.lastDue) {
		due = l.lastDue
	}
	m.due, l.lastDue = due, due
	l.c.queued.Add(n)
	l.busy.Add(1)
	l.items = append(l.items, m)
	if len(l.items) == 1 {
		l.arm(now)
	}
}

// arm sets the timer for the oldest held message.
// REQUIRES: l.mu held, l.items not empty.
func (l *delayLine) arm(now time.Time) {
	wait := l.items[0].due.Sub(now)
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, l.flush)
		return
	}
	l.timer.Reset(wait)
}

// flush hands the loop every held message that is due, in order, and
// re-arms the timer for the next. It runs on the timer's goroutine.
func (l *delayLine) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	i := 0
	for ; i < len(l.items) && !l.items[i].due.After(now); i++ {
		m := &l.items[i]
		if m.held {
			l.c.cs.srv.release(int(m.n))
		}
		l.c.handOver(m.bufs, m.n, l.written)
		*m = heldMsg{}
	}
	l.items = l.items[:copy(l.items, l.items[i:])]
	if len(l.items) > 0 {
		l.arm(now)
	}
}

// written runs once a held message left the line (written or dropped).
func (l *delayLine) written() { l.busy.Add(-1) }
