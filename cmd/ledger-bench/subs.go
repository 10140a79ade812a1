package main

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/valyala/fastjson"

	"github.com/ledgervenue/node/bench/load"
)

// subsStopWait bounds how long the subscribers get to see the last
// notifications after a run.
const subsStopWait = 500 * time.Millisecond

// subsChannels are the channels --subs-channel takes: the eth_subscribe
// parameters, and the fields of a notification's result that name what it
// announces (the same head, log, book update or receipt reaches every
// subscriber). The svc_ channels are ledgerd's.
var subsChannels = map[string]struct {
	params string
	key    [][]string
}{
	"newHeads":              {`["newHeads"]`, [][]string{{"hash"}}},
	"logs":                  {`["logs",{}]`, [][]string{{"transactionHash"}, {"logIndex"}}},
	"svc_orderbook":         {`["svc_orderbook",{}]`, [][]string{{"orderbook_id"}, {"timestamp"}}},
	"svc_confirmedReceipts": {`["svc_confirmedReceipts",{}]`, [][]string{{"transactionHash"}}},
}

// subscribers are WebSocket connections subscribed to one channel while a
// run writes. Each notification's lag is its arrival minus the
// first arrival of the same head or log at any subscriber: the fan-out
// spread.
type subscribers struct {
	conns []*websocket.Conn
	key   [][]string // subsChannels[channel].key
	start time.Time
	wg    sync.WaitGroup

	mu      sync.Mutex
	first   map[string]time.Duration // head or log -> first arrival, since start
	lag     load.Histogram
	channel string
	notes   int64
	errors  int64
}

// subsResult is what the subscribers saw during one run.
type subsResult struct {
	Subscribers   int     `json:"subscribers"`
	Channel       string  `json:"channel"`
	Heads         int     `json:"heads"`         // distinct heads, logs, book updates or receipts notified
	Notifications int64   `json:"notifications"` // over all subscribers
	PerSecond     float64 `json:"per_second"`
	LagP50Ms      float64 `json:"lag_p50_ms"`
	LagP99Ms      float64 `json:"lag_p99_ms"`
	LagMaxMs      float64 `json:"lag_max_ms"`
	Errors        int64   `json:"errors"` // subscriptions that ended early
}

// startSubscribers opens n subscriptions to t's channel; n = 0 gives a
// no-op set.
func startSubscribers(ctx context.Context, t *target, n int, channel string) (*subscribers, error) {
	ch := subsChannels[channel]
	s := &subscribers{first: map[string]time.Duration{}, key: ch.key, channel: channel}
	if n == 0 {
		return s, nil
	}
	for range n {
		ws, _, err := t.wsDialer().DialContext(ctx, t.wsURL(), nil)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("subscriber: %w", err)
		}
		s.conns = append(s.conns, ws)
		ws.SetReadLimit(load.BodyBytesMax)
		_ = ws.SetReadDeadline(time.Now().Add(setupTimeout))
		err = ws.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":`+ch.params+`}`))
		var answer []byte
		if err == nil {
			_, answer, err = ws.ReadMessage()
		}
		if err == nil && !resultAnswer(200, answer) {
			err = fmt.Errorf("eth_subscribe answered %s", answer)
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("subscriber: %w", err)
		}
		_ = ws.SetReadDeadline(time.Time{})
	}
	s.start = time.Now()
	for _, ws := range s.conns {
		s.wg.Go(func() { s.read(ws) })
	}
	return s, nil
}

// read counts one subscriber's notifications until its connection closes.
func (s *subscribers) read(ws *websocket.Conn) {
	var p fastjson.Parser
	var lag load.Histogram
	var notes int64
	var key []byte
	defer func() {
		s.mu.Lock()
		s.lag.Merge(&lag)
		s.notes += notes
		s.mu.Unlock()
	}()
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			return
		}
		now := time.Since(s.start)
		v, err := p.ParseBytes(msg)
		key = key[:0]
		if err == nil {
			r := v.Get("params", "result")
			for _, k := range s.key {
				if f := r.Get(k...); f != nil {
					key = f.MarshalTo(key) // a string or a number
				}
			}
		}
		if len(key) == 0 {
			if bytes.Contains(msg, []byte(`"error"`)) {
				s.mu.Lock()
				s.errors++
				s.mu.Unlock()
				return
			}
			continue
		}
		notes++
		s.mu.Lock()
		first, seen := s.first[string(key)]
		if !seen {
			first = now
			s.first[string(key)] = now
		}
		s.mu.Unlock()
		lag.Record(now - first)
	}
}

// stop lets the last notifications arrive, closes the subscriptions and
// returns what they saw (nil without subscribers).
func (s *subscribers) stop() *subsResult {
	if len(s.conns) == 0 {
		return nil
	}
	time.Sleep(subsStopWait)
	elapsed := time.Since(s.start)
	s.close()
	s.wg.Wait()
	return &subsResult{Subscribers: len(s.conns), Channel: s.channel, Heads: len(s.first), Notifications: s.notes,
		PerSecond: float64(s.notes) / elapsed.Seconds(), LagP50Ms: ms(s.lag.Quantile(0.5)),
		LagP99Ms: ms(s.lag.Quantile(0.99)), LagMaxMs: ms(s.lag.Max()), Errors: s.errors}
}

func (s *subscribers) close() {
	for _, ws := range s.conns {
		ws.Close()
	}
}
