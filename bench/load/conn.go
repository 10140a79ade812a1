package load

import (
	"errors"
	"net"
	"time"
)

var errUnsolicited = errors.New("load: response without a request")

// conn drives one keep-alive connection from one goroutine: it writes up to
// Pipeline requests in one write, then reads until answers free slots, and
// refills. Responses arrive in request order (HTTP/1.1), so the send times
// form a FIFO ring.
//
// Invariant: inflight <= len(sentAt) == Pipeline; the oldest request in
// flight was sent at sentAt[head].
type conn struct {
	id   int
	nc   net.Conn
	cfg  *Config
	run  *run
	head []byte // request head up to the Content-Length value

	out      []byte
	in       inbox
	sentAt   []time.Duration // since run.start
	first    int             // ring index of the oldest request in flight
	inflight int
	seq      uint64 // requests this connection sent
	stopped  bool   // sends no more requests

	hist       Histogram
	sent, done int64
	errs       int64
	finished   time.Duration // since run.start, when the last answer came
	err        error
}

func newConn(id int, nc net.Conn, cfg *Config, head []byte) *conn {
	return &conn{id: id, nc: nc, cfg: cfg, head: head, sentAt: make([]time.Duration, cfg.Pipeline)}
}

func (c *conn) loop() {
	for {
		c.fill()
		if len(c.out) > 0 {
			if _, err := c.nc.Write(c.out); err != nil {
				c.fail(err)
				return
			}
		}
		if c.inflight == 0 {
			c.finished = time.Since(c.run.start)
			return
		}
		if err := c.read(); err != nil {
			c.fail(err)
			return
		}
	}
}

// fill queues requests in c.out until the pipeline is full or the run says
// stop.
func (c *conn) fill() {
	c.out = c.out[:0]
	if c.stopped {
		return
	}
	now := time.Since(c.run.start)
	if now >= c.cfg.Duration {
		c.run.timeUp.Store(true)
		c.stopped = true
		return
	}
	for c.inflight < len(c.sentAt) {
		body := c.cfg.Body
		if c.cfg.Next != nil {
			body = c.cfg.Next(c.id, c.seq)
		}
		if body == nil || c.run.tickets.Add(-1) < 0 {
			c.stopped = true
			return
		}
		c.out = appendRequest(c.out, c.head, body)
		c.sentAt[(c.first+c.inflight)%len(c.sentAt)] = now
		c.inflight++
		c.seq++
		c.sent++
	}
}

// read takes one read's worth of bytes and settles every complete response.
func (c *conn) read() error {
	n, err := c.nc.Read(c.in.space())
	c.in.commit(n)
	now := time.Since(c.run.start)
	for {
		status, body, ok, perr := c.in.next()
		if perr != nil {
			return perr
		}
		if !ok {
			break
		}
		if c.inflight == 0 {
			return errUnsolicited
		}
		c.hist.Record(now - c.sentAt[c.first])
		c.first = (c.first + 1) % len(c.sentAt)
		c.inflight--
		c.done++
		c.finished = now
		if !c.accept(status, body) {
			c.errs++
		}
	}
	return err
}

func (c *conn) accept(status int, body []byte) bool {
	if c.cfg.Check == nil {
		return status == 200
	}
	return c.cfg.Check(status, body)
}

// fail ends the connection: what is still in flight will never be answered.
func (c *conn) fail(err error) {
	c.errs += int64(c.inflight)
	c.inflight = 0
	c.stopped = true
	c.err = err
	c.finished = time.Since(c.run.start)
}
