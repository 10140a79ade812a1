package marketdata

import (
	"math"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// Resolution is a candle width, as the openapi CandleResolution enum.
type Resolution uint8

const (
	Res1m Resolution = iota
	Res5m
	Res15m
	Res1h
	Res4h
	Res1d
	resolutionCount
)

var resolutionUs = [resolutionCount]int64{
	Res1m:  minuteUs,
	Res5m:  5 * minuteUs,
	Res15m: 15 * minuteUs,
	Res1h:  60 * minuteUs,
	Res4h:  240 * minuteUs,
	Res1d:  dayUs,
}

var resolutionText = [resolutionCount]string{"1m", "5m", "15m", "1h", "4h", "1d"}

// Us returns the width in microseconds.
func (r Resolution) Us() int64 { return resolutionUs[r] }

func (r Resolution) String() string { return resolutionText[r] }

// ResolutionNamed returns the resolution whose name (String) is name.
func ResolutionNamed(name []byte) (Resolution, bool) {
	for r := range resolutionCount {
		if string(name) == resolutionText[r] {
			return r, true
		}
	}
	return 0, false
}

// ResolutionOfSeconds returns the resolution whose width is seconds.
func ResolutionOfSeconds(seconds uint64) (Resolution, bool) {
	for r := range resolutionCount {
		if uint64(resolutionUs[r])/1_000_000 == seconds {
			return r, true
		}
	}
	return 0, false
}

// Candle is one OHLCV bucket: the ticks that traded in
// [StartUs, StartUs+width). Prices are clearing prices, Volume is base wei.
type Candle struct {
	StartUs                        int64
	Open, High, Low, Close, Volume uint256.Int
}

// candleRing keeps the newest CandleBucketsMax buckets of one resolution.
type candleRing struct {
	// buf grows by append up to CandleBucketsMax, then wraps.
	buf  []Candle
	head int // index of the oldest bucket once buf is full
}

func (c *candleRing) len() int { return len(c.buf) }

// at returns the i-th oldest bucket.
func (c *candleRing) at(i int) *Candle {
	return &c.buf[(c.head+i)%len(c.buf)]
}

// add folds a traded tick into its bucket.
//
// REQUIRES: tickUs ≥ 0 and not before the newest bucket.
func (c *candleRing) add(widthUs, tickUs int64, price, volume *uint256.Int) {
	startUs := tickUs - tickUs%widthUs
	if n := c.len(); n > 0 {
		last := c.at(n - 1)
		if last.StartUs == startUs {
			if price.Gt(&last.High) {
				last.High = *price
			}
			if price.Lt(&last.Low) {
				last.Low = *price
			}
			last.Close = *price
			last.Volume.Add(&last.Volume, volume)
			return
		}
		if last.StartUs > startUs {
			panic("BUG: marketdata: tick before the newest candle")
		}
	}
	fresh := Candle{StartUs: startUs, Open: *price, High: *price, Low: *price, Close: *price, Volume: *volume}
	if len(c.buf) < CandleBucketsMax {
		c.buf = append(c.buf, fresh)
		return
	}
	c.buf[c.head] = fresh
	c.head = (c.head + 1) % len(c.buf)
}

// CandlesQuery selects candles whose start lies in [FromUs, ToUs], newest
// first, at most Limit of them.
type CandlesQuery struct {
	Resolution Resolution
	FromUs     int64
	ToUs       int64 // math.MaxInt64 when the request named none
	Limit      int   // 1..CandlesLimitMax; ≤ 0 means CandlesLimitMax
}

// Candles appends the selected candles of a market to dst, newest first.
// It reports false for an unknown market.
func (x *Index) Candles(dst []Candle, bookID clob.Hash, q *CandlesQuery) ([]Candle, bool) {
	b, ok := x.books[bookID]
	if !ok {
		return dst, false
	}
	limit := q.Limit
	if limit <= 0 || limit > CandlesLimitMax {
		limit = CandlesLimitMax
	}
	ring := &b.candles[q.Resolution%resolutionCount]
	count := 0
	for i := ring.len() - 1; i >= 0 && count < limit; i-- {
		c := ring.at(i)
		if c.StartUs < q.FromUs {
			break
		}
		if c.StartUs > q.ToUs {
			continue
		}
		dst = append(dst, *c)
		count++
	}
	return dst, true
}

// stats24h is a market's rolling 24h figures.
type stats24h struct {
	volume, high, low uint256.Int
	changeBps         int64
}

// stats24h sums the 1m buckets that overlap (nowUs − 24h, nowUs]; the
// change is last's (the last clearing price as of nowUs, when hasLast)
// against the window's open.
func (b *book) stats24h(nowUs int64, last *uint256.Int, hasLast bool) (s stats24h) {
	ring := &b.candles[Res1m]
	var open uint256.Int
	traded := false
	for i := ring.len() - 1; i >= 0; i-- {
		c := ring.at(i)
		if c.StartUs+minuteUs <= nowUs-dayUs {
			break
		}
		if c.StartUs > nowUs {
			continue
		}
		if !traded || c.High.Gt(&s.high) {
			s.high = c.High
		}
		if !traded || c.Low.Lt(&s.low) {
			s.low = c.Low
		}
		s.volume.Add(&s.volume, &c.Volume)
		open = c.Open
		traded = true
	}
	if traded && hasLast {
		s.changeBps = changeBps(&open, last)
	}
	return s
}

// closeAt is the close of the newest kept 1m bucket starting at or before
// atUs; ok is false without one.
func (b *book) closeAt(atUs int64) (price uint256.Int, ok bool) {
	ring := &b.candles[Res1m]
	for i := ring.len() - 1; i >= 0; i-- {
		if c := ring.at(i); c.StartUs <= atUs {
			return c.Close, true
		}
	}
	return price, false
}

// changeBps is (to − from) / from in basis points, truncated toward zero
// and saturated to the int64 range.
func changeBps(from, to *uint256.Int) int64 {
	if from.IsZero() {
		return 0
	}
	var diff uint256.Int
	negative := to.Lt(from)
	if negative {
		diff.Sub(from, to)
	} else {
		diff.Sub(to, from)
	}
	var bps uint256.Int
	bps.SetUint64(10_000)
	if _, overflow := diff.MulDivOverflow(&diff, &bps, from); overflow || !diff.IsUint64() || diff.Uint64() > math.MaxInt64 {
		if negative {
			return math.MinInt64 + 1
		}
		return math.MaxInt64
	}
	if negative {
		return -int64(diff.Uint64())
	}
	return int64(diff.Uint64())
}
