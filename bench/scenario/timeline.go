package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/holiman/uint256"
)

// timeline fires a scenario's oracle points, walks and events in order.
type timeline struct {
	sc              *Scenario
	markets         map[string]*Market // the markets the file names (Check)
	next, nextEvent int                // the first oracle point and event not fired
	walks           []walker
}

// walker is one oracle walk's state: its own PRNG, seeded with the
// scenario's seed and 1<<32 + the walk's index (the bots' streams use
// their index, below 1<<32), and its next time.
type walker struct {
	rng    *rand.Rand
	nextUs int64
}

func newTimeline(sc *Scenario, markets map[string]*Market) *timeline {
	tl := &timeline{sc: sc, markets: markets}
	for i, w := range sc.Walks {
		tl.walks = append(tl.walks, walker{rng: rand.New(rand.NewPCG(sc.Seed, 1<<32+uint64(i))), nextUs: w.EveryUs})
	}
	return tl
}

// fire applies what is due at or before t (node µs since the start): the
// oracle points, then the walks, then the events, each answered before
// the next; it returns how many it applied. An error answered to one fails
// the scenario.
func (tl *timeline) fire(ctx context.Context, c conn, t int64) (int, error) {
	n := 0
	for ; tl.next < len(tl.sc.Oracle) && tl.sc.Oracle[tl.next].AtUs <= t; tl.next++ {
		o := &tl.sc.Oracle[tl.next]
		if err := c.setOracle(ctx, tl.markets[o.Market], &o.Price); err != nil {
			return n, fmt.Errorf("oracle[%d] at %gs: %w", tl.next, float64(o.AtUs)/1e6, err)
		}
		n++
	}
	for i := range tl.walks {
		w, spec := &tl.walks[i], &tl.sc.Walks[i]
		if w.nextUs > t {
			continue
		}
		for w.nextUs <= t {
			w.nextUs += spec.EveryUs
		}
		if err := tl.walk(ctx, c, w, spec); err != nil {
			return n, fmt.Errorf("oracle_walk[%d] at %gs: %w", i, float64(t)/1e6, err)
		}
		n++
	}
	for ; tl.nextEvent < len(tl.sc.Events) && tl.sc.Events[tl.nextEvent].AtUs <= t; tl.nextEvent++ {
		e := &tl.sc.Events[tl.nextEvent]
		var params []json.RawMessage
		if err := json.Unmarshal(e.Params, &params); err != nil {
			return n, fmt.Errorf("events[%d].params: %w", tl.nextEvent, err)
		}
		args := make([]any, len(params))
		for i := range params {
			args[i] = params[i]
		}
		var answer json.RawMessage
		if err := c.call(ctx, &answer, e.Method, args...); err != nil {
			return n, fmt.Errorf("events[%d] at %gs: %w", tl.nextEvent, float64(e.AtUs)/1e6, err)
		}
		n++
	}
	return n, nil
}

// walk reads the market's oracle and sets it moved by a draw in
// [-Bps, +Bps] basis points, in whole price steps: at least one step when
// the draw is not 0, never below one step.
func (tl *timeline) walk(ctx context.Context, c conn, w *walker, spec *Walk) error {
	m := tl.markets[spec.Market]
	var rows []struct {
		Price hexutil.Big `json:"oracle_price"`
	}
	if err := c.call(ctx, &rows, "ob_getOraclePrices", m.ID); err != nil {
		return err
	}
	if len(rows) != 1 {
		return fmt.Errorf("ob_getOraclePrices: %d rows for %s, want 1", len(rows), spec.Market)
	}
	var price uint256.Int
	if price.SetFromBig(rows[0].Price.ToInt()) {
		return fmt.Errorf("ob_getOraclePrices: %s's oracle does not fit 256 bits", spec.Market)
	}
	steps := new(uint256.Int).Div(&price, &m.Step)
	bps := w.rng.IntN(2*spec.Bps+1) - spec.Bps
	delta := new(uint256.Int).Mul(steps, uint256.NewInt(uint64(max(bps, -bps))))
	delta.Div(delta, uint256.NewInt(10_000))
	if delta.IsZero() && bps != 0 {
		delta.SetOne()
	}
	switch {
	case bps > 0:
		steps.Add(steps, delta)
	case steps.Gt(delta):
		steps.Sub(steps, delta)
	default:
		steps.SetOne()
	}
	return c.setOracle(ctx, m, price.Mul(steps, &m.Step))
}

// setOracle sets m's oracle price (wei) with admin_setOraclePrice.
func (c conn) setOracle(ctx context.Context, m *Market, price *uint256.Int) error {
	var ok bool
	return c.call(ctx, &ok, "admin_setOraclePrice", map[string]any{"orderbook_id": m.ID, "price": (*hexutil.Big)(price.ToBig())})
}
