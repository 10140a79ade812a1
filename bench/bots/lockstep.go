package bots

import (
	"context"
	"fmt"
)

// ArrivalsPerStepMax bounds a taker's orders in one Step; arrivals past it
// wait for the next step. At TakerRateMax and 500 ms auctions a step
// expects 25; at the default rate, one.
const ArrivalsPerStepMax = 256

// Lockstep is a bot session its caller drives one interval of the node's
// time at a time: a scenario (bench/scenario) that owns the node's clock.
// It has no goroutine and no timer. Step runs each bot's actions for one
// interval, in bot order, each waited for until the node answered, so the
// node admits them in the same order every time.
//
// The decisions are the wall-clock session's (act and decide.go); only the
// schedule differs. A maker quotes right after each tick at a multiple of
// its quote period (half an interval after it on the wall clock: here the
// next tick waits for the step to end). A taker's Poisson arrivals are drawn
// on the node's time, and all those of an interval are sent in its step.
// Given the same answers from the node, a spec sends the same transactions
// in the same order.
//
// Not safe for concurrent use, except Status.
type Lockstep struct {
	bots      []*bot
	arrivalUs []int64 // per bot: a taker's next arrival, node µs (0: none drawn yet)
}

// StartLockstep resolves spec's markets on the node at addr, builds its
// bots (one connection each) and funds them one after the other in bot
// order. cfg is a Controller's: NowMicros must be the node's clock.
func StartLockstep(ctx context.Context, cfg Config, addr string, spec Spec) (*Lockstep, error) {
	c := New(cfg)
	c.SetAddr(addr)
	bots, err := c.setup(ctx, &spec, c.addr)
	l := &Lockstep{bots: bots, arrivalUs: make([]int64, len(bots))}
	if err != nil {
		l.Close()
		return nil, err
	}
	for _, b := range bots {
		if !b.fund(ctx) {
			l.Close()
			return nil, fmt.Errorf("bots: cannot fund %s: %s", b.name, b.status().LastError)
		}
	}
	return l, nil
}

// Step runs every bot's actions for the interval [nowUs, nowUs+stepUs) of
// the node's time and returns the transactions sent: a maker's quote round
// when nowUs is a multiple of its quote period, a taker's arrivals that
// fall in the interval. A refusal or an error is counted (Status) and the
// bot acts again at its next time, without the wall-clock backoff. Once
// ctx ends no further bot acts.
// REQUIRES: the ticks up to nowUs applied and the node's time at nowUs
// until Step returns.
func (l *Lockstep) Step(ctx context.Context, nowUs, stepUs int64) (sent uint64) {
	for i, b := range l.bots {
		if ctx.Err() != nil {
			break
		}
		before := b.sent.Load()
		switch {
		case b.role == taker:
			l.arrive(ctx, i, nowUs, nowUs+stepUs)
		case nowUs%b.quotePeriodUs() == 0:
			b.act(ctx)
		}
		sent += b.sent.Load() - before
	}
	return sent
}

// arrive sends taker i's orders whose arrival falls before endUs.
func (l *Lockstep) arrive(ctx context.Context, i int, fromUs, endUs int64) {
	b, next := l.bots[i], &l.arrivalUs[i]
	if *next == 0 {
		*next = fromUs + b.d.pause().Microseconds()
	}
	for n := 0; *next < endUs && n < ArrivalsPerStepMax && ctx.Err() == nil; n++ {
		b.act(ctx)
		*next += b.d.pause().Microseconds()
	}
}

// Status reads every bot's figures; safe while Step runs.
func (l *Lockstep) Status() []BotStatus {
	out := make([]BotStatus, 0, len(l.bots))
	for _, b := range l.bots {
		out = append(out, b.status())
	}
	return out
}

// Close closes the bots' connections.
func (l *Lockstep) Close() {
	for _, b := range l.bots {
		b.c.close()
	}
}
