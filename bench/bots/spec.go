package bots

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ledgervenue/node/core/clob"
)

// Bounds of a spec. Each is checked by ParseSpec and tested.
const (
	// SpecBytesMax bounds the spec string itself.
	SpecBytesMax = 1024
	// MakersMax bounds makers per market.
	MakersMax = 8
	// TakersMax bounds takers per market.
	TakersMax = 8
	// BotsMax bounds the bots of a session, (makers + takers) × markets:
	// one goroutine and one connection each.
	BotsMax = 64
	// LevelsMax bounds the orders on each side of a maker's ladder. A quote
	// round cancels at most the 2 × levels orders of the round before and
	// places 2 × levels new ones in one submitBatch, whose inner calls the
	// orderbook bounds to clob.BatchIntentsMax.
	LevelsMax = clob.BatchIntentsMax / 4
	// TakerRateMax bounds each taker's IOC orders per second.
	TakerRateMax = 50
	// QuoteEveryMax bounds the auctions between a maker's quote rounds.
	QuoteEveryMax = 120
	// SpreadBpsMax bounds the distance between ladder levels, basis points
	// of the reference price.
	SpreadBpsMax = 1000
	// WalkBpsMax bounds one step of the spot reference's random walk.
	WalkBpsMax = 100
	// LotsMax bounds the lots of one bot order (sizes are 1..lots lots).
	LotsMax = 1000
	// StartPriceMax bounds start-price, whole quote units.
	StartPriceMax = 1_000_000_000
)

// Spec is a parsed bot session: what ParseSpec reads from
//
//	makers=2,takers=2,taker-rate=5,levels=5,seed=1,markets=WETH/USD,ETH-PERP
//
// Makers and Takers are per market; Markets empty means every market.
type Spec struct {
	Makers, Takers int
	Levels         int
	TakerRate      int // IOC orders per second per taker
	QuoteEvery     int // auctions between a maker's quote rounds
	SpreadBps      int // between the reference and the first level, and between levels
	WalkBps        int // largest step of a spot market's reference walk per quote round
	Lots           int // an order's size is 1..Lots lots
	StartPrice     uint64
	Seed           uint64
	Markets        []string
	Transport      string // "ws" or "http"
}

// DefaultSpec is what "default" (and every key left out) stands for: a
// modest session that keeps each market's book two-sided and trading. Its
// spot books sit around 1000 USD, below the 2000 USD of the README's
// examples: an example's buy then takes the bots' asks too and fills
// whole at the uniform price, where bids above 2000 would take part of the
// example's sell and leave its buy short.
var DefaultSpec = Spec{Makers: 1, Takers: 1, Levels: 5, TakerRate: 2, QuoteEvery: 2, SpreadBps: 5, WalkBps: 3,
	Lots: 10, StartPrice: 1000, Seed: 1, Transport: "ws"}

// Bots is the number of bots the spec runs over markets markets.
func (s *Spec) Bots(markets int) int { return (s.Makers + s.Takers) * markets }

// String is the canonical spec text: ParseSpec(s.String()) == s.
func (s *Spec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "makers=%d,takers=%d,levels=%d,taker-rate=%d,quote-every=%d,spread-bps=%d,walk-bps=%d,lots=%d,start-price=%d,seed=%d,transport=%s",
		s.Makers, s.Takers, s.Levels, s.TakerRate, s.QuoteEvery, s.SpreadBps, s.WalkBps, s.Lots, s.StartPrice, s.Seed, s.Transport)
	if len(s.Markets) > 0 {
		b.WriteString(",markets=" + strings.Join(s.Markets, ","))
	}
	return b.String()
}

// intKnob is a key whose value is an integer in [lo, hi].
type intKnob struct {
	lo, hi int
	field  func(*Spec) *int
}

var intKnobs = map[string]intKnob{
	"makers":      {0, MakersMax, func(s *Spec) *int { return &s.Makers }},
	"takers":      {0, TakersMax, func(s *Spec) *int { return &s.Takers }},
	"levels":      {1, LevelsMax, func(s *Spec) *int { return &s.Levels }},
	"taker-rate":  {1, TakerRateMax, func(s *Spec) *int { return &s.TakerRate }},
	"quote-every": {1, QuoteEveryMax, func(s *Spec) *int { return &s.QuoteEvery }},
	"spread-bps":  {1, SpreadBpsMax, func(s *Spec) *int { return &s.SpreadBps }},
	"walk-bps":    {0, WalkBpsMax, func(s *Spec) *int { return &s.WalkBps }},
	"lots":        {1, LotsMax, func(s *Spec) *int { return &s.Lots }},
}

// ParseSpec reads "default" or comma-separated key=value pairs over
// DefaultSpec. markets takes one or more names: the items after it without
// '=' are more names. A key may appear once; unknown keys, values out of
// their bounds and sessions of no or more than BotsMax bots (counted when
// markets are named) are errors.
func ParseSpec(text string) (Spec, error) { return ParseSpecOver(DefaultSpec, text) }

// ParseSpecOver is ParseSpec with base standing for "default" and for every
// key left out: a scenario (bench/scenario) passes DefaultSpec with its own
// seed, so a spec that names no seed takes the scenario's.
func ParseSpecOver(base Spec, text string) (Spec, error) {
	s := base
	if len(text) > SpecBytesMax {
		return s, fmt.Errorf("bot spec longer than %d bytes", SpecBytesMax)
	}
	if text = strings.TrimSpace(text); text == "default" {
		return s, nil
	}
	if text == "" {
		return s, fmt.Errorf(`empty bot spec (use "default" or key=value pairs, docs/bots.md)`)
	}
	seen := map[string]bool{}
	inMarkets := false
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		key, value, ok := strings.Cut(item, "=")
		if !ok {
			if !inMarkets || item == "" {
				return s, fmt.Errorf("bot spec: %q is not key=value", item)
			}
			s.Markets = append(s.Markets, item)
			continue
		}
		if seen[key] {
			return s, fmt.Errorf("bot spec: %s given twice", key)
		}
		seen[key] = true
		inMarkets = key == "markets"
		if err := s.set(key, value); err != nil {
			return s, err
		}
	}
	if s.Makers+s.Takers == 0 {
		return s, fmt.Errorf("bot spec: no bots (makers and takers are both 0)")
	}
	if n := len(s.Markets); n > 0 && s.Bots(n) > BotsMax {
		return s, fmt.Errorf("bot spec: %d bots, more than %d ((makers + takers) × markets)", s.Bots(n), BotsMax)
	}
	return s, nil
}

func (s *Spec) set(key, value string) error {
	if k, ok := intKnobs[key]; ok {
		v, err := strconv.Atoi(value)
		if err != nil || v < k.lo || v > k.hi {
			return fmt.Errorf("bot spec: %s=%q: want an integer in [%d, %d]", key, value, k.lo, k.hi)
		}
		*k.field(s) = v
		return nil
	}
	switch key {
	case "seed":
		v, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return fmt.Errorf("bot spec: seed=%q: want an unsigned 64-bit integer", value)
		}
		s.Seed = v
	case "start-price":
		v, err := strconv.ParseUint(value, 10, 64)
		if err != nil || v < 1 || v > StartPriceMax {
			return fmt.Errorf("bot spec: start-price=%q: want whole quote units in [1, %d]", value, StartPriceMax)
		}
		s.StartPrice = v
	case "transport":
		if value != "ws" && value != "http" {
			return fmt.Errorf("bot spec: transport=%q: want ws or http", value)
		}
		s.Transport = value
	case "markets":
		if value == "" {
			return fmt.Errorf("bot spec: markets= names no market")
		}
		s.Markets = []string{value}
	default:
		return fmt.Errorf("bot spec: unknown key %q (makers, takers, levels, taker-rate, quote-every, spread-bps, walk-bps, lots, start-price, seed, transport, markets)", key)
	}
	return nil
}
