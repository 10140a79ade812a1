package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/bench/bots"
)

// Bounds of a scenario file. Each is checked by Parse and tested.
const (
	// FileBytesMax bounds the file.
	FileBytesMax = 1 << 20
	// TimelineMax bounds the oracle points and the events together: each is
	// one call the player makes and one input the node logs.
	TimelineMax = 10_000
	// DurationMax bounds a scenario's node time, seconds (a day): at 500 ms
	// auctions, 172 800 steps.
	DurationMax = 86_400
	// PaceMax bounds pace: the wall time a step waits, in steps.
	PaceMax = 100
	// NameBytesMax bounds the name.
	NameBytesMax = 64
	// PriceUnitsMax bounds an oracle price, whole quote units.
	PriceUnitsMax = 1_000_000_000_000
	// WalksMax bounds the oracle walks (one per market at most).
	WalksMax = 16
	// WalkBpsMax bounds a walk's largest move, basis points.
	WalkBpsMax = 1000
)

// StartUs is where the node's clock starts under a scenario,
// 2026-01-01T00:00:00Z in Unix µs: a fixed time, so that two plays stamp
// the same times (a tick's time is in its hash and in the oracle's walk).
const StartUs = 1_767_225_600_000_000

// Scenario is a parsed scenario file.
type Scenario struct {
	Name       string
	Seed       uint64
	DurationUs int64
	Pace       float64
	ProgressUs int64      // node time between progress lines
	Bots       *bots.Spec // nil: no bots
	Oracle     []OraclePoint
	Walks      []Walk
	Events     []Event
	Exit       bool // "then": "exit": ledgerd ends once played
}

// OraclePoint sets a perp market's oracle price at AtUs
// (admin_setOraclePrice).
type OraclePoint struct {
	AtUs   int64
	Market string
	Price  uint256.Int // wei
}

// Walk moves a perp market's oracle every EveryUs of node time (from
// EveryUs on) by a seeded draw of up to ±Bps basis points.
type Walk struct {
	Market  string
	Bps     int
	EveryUs int64
}

// Event is a call the player makes at AtUs.
type Event struct {
	AtUs   int64
	Method string
	Params json.RawMessage // a JSON array
}

// file is the JSON shape; pointers tell a missing key from a zero.
type file struct {
	Name      *string           `json:"name"`
	Seed      *uint64           `json:"seed"`
	DurationS *float64          `json:"duration_s"`
	Pace      *float64          `json:"pace"`
	ProgressS *float64          `json:"progress_s"`
	Bots      *string           `json:"bots"`
	Oracle    []json.RawMessage `json:"oracle"`
	Walks     []json.RawMessage `json:"oracle_walk"`
	Events    []json.RawMessage `json:"events"`
	Then      *string           `json:"then"`
}

type oracleJSON struct {
	AtS    *float64 `json:"at_s"`
	Market *string  `json:"market"`
	Price  *string  `json:"price"`
}

type walkJSON struct {
	Market *string  `json:"market"`
	Bps    *int     `json:"bps"`
	EveryS *float64 `json:"every_s"`
}

type eventJSON struct {
	AtS    *float64        `json:"at_s"`
	Method *string         `json:"method"`
	Params json.RawMessage `json:"params"`
}

// when is a timeline entry's at_s, for parseList.
func (o oracleJSON) when() *float64 { return o.AtS }
func (e eventJSON) when() *float64  { return e.AtS }

// TimelineMethods are the methods an event may call besides the lab_
// controls: they change the market, not the delivery.
var TimelineMethods = []string{"admin_setOraclePrice", "admin_deposit"}

// Parse reads a scenario file strictly: every key known, every value of
// its type and within its bounds, the oracle points and the events each in
// time order (equal times keep file order). Errors name the field and the
// index, e.g. `events[3].at_s: 12 is before events[2]'s 20`.
func Parse(data []byte) (*Scenario, error) {
	if len(data) > FileBytesMax {
		return nil, fmt.Errorf("scenario file larger than %d bytes", FileBytesMax)
	}
	var f file
	if err := decode(data, &f, ""); err != nil {
		return nil, err
	}
	sc := &Scenario{Pace: 1, ProgressUs: 10_000_000}
	switch {
	case f.Name == nil || *f.Name == "":
		return nil, errors.New("name: missing")
	case len(*f.Name) > NameBytesMax:
		return nil, fmt.Errorf("name: longer than %d bytes", NameBytesMax)
	case f.Seed == nil:
		return nil, errors.New("seed: missing (any unsigned 64-bit integer)")
	case f.DurationS == nil:
		return nil, errors.New("duration_s: missing")
	}
	sc.Name, sc.Seed = *f.Name, *f.Seed
	var err error
	if sc.DurationUs, err = seconds("duration_s", *f.DurationS, DurationMax); err != nil {
		return nil, err
	}
	if sc.DurationUs == 0 {
		return nil, errors.New("duration_s: must be > 0")
	}
	if f.Pace != nil {
		if p := *f.Pace; math.IsNaN(p) || p < 0 || p > PaceMax {
			return nil, fmt.Errorf("pace: %v out of [0, %d]", p, PaceMax)
		}
		sc.Pace = *f.Pace
	}
	if f.ProgressS != nil {
		if sc.ProgressUs, err = seconds("progress_s", *f.ProgressS, DurationMax); err != nil {
			return nil, err
		}
		if sc.ProgressUs == 0 {
			return nil, errors.New("progress_s: must be > 0")
		}
	}
	if err := sc.parseBots(f.Bots); err != nil {
		return nil, err
	}
	if f.Then != nil {
		switch *f.Then {
		case "serve":
		case "exit":
			sc.Exit = true
		default:
			return nil, fmt.Errorf(`then: %q is not "serve" or "exit"`, *f.Then)
		}
	}
	if n := len(f.Oracle) + len(f.Events); n > TimelineMax {
		return nil, fmt.Errorf("oracle and events: %d entries, more than %d", n, TimelineMax)
	}
	if sc.Oracle, err = parseList(sc, f.Oracle, "oracle", parseOracle); err != nil {
		return nil, err
	}
	if sc.Events, err = parseList(sc, f.Events, "events", parseEvent); err != nil {
		return nil, err
	}
	if err := sc.parseWalks(f.Walks); err != nil {
		return nil, err
	}
	return sc, nil
}

// parseBots reads the bots' spec over the defaults with the scenario's
// seed; absent is "default", "none" runs no bots.
func (sc *Scenario) parseBots(text *string) error {
	if text != nil && *text == "none" {
		return nil
	}
	spec := "default"
	if text != nil {
		spec = *text
	}
	base := bots.DefaultSpec
	base.Seed = sc.Seed
	s, err := bots.ParseSpecOver(base, spec)
	if err != nil {
		return fmt.Errorf("bots: %w", err)
	}
	sc.Bots = &s
	return nil
}

// parseList decodes each entry of a timeline list strictly, reads its
// at_s (required, in [0, duration_s), not before the entry above it) and
// builds it with parse.
func parseList[J interface{ when() *float64 }, T any](sc *Scenario, raw []json.RawMessage, name string,
	parse func(where string, atUs int64, j *J) (T, error)) ([]T, error) {
	out := make([]T, 0, len(raw))
	prevUs := int64(0)
	for i, r := range raw {
		where := fmt.Sprintf("%s[%d]", name, i)
		var j J
		if err := decode(r, &j, where+"."); err != nil {
			return nil, err
		}
		atUs, err := sc.at(where, j.when())
		if err != nil {
			return nil, err
		}
		if atUs < prevUs {
			return nil, fmt.Errorf("%s.at_s: %v is before %s[%d]'s %v: list them in time order",
				where, float64(atUs)/1e6, name, i-1, float64(prevUs)/1e6)
		}
		e, err := parse(where, atUs, &j)
		if err != nil {
			return nil, err
		}
		out, prevUs = append(out, e), atUs
	}
	return out, nil
}

func parseOracle(where string, atUs int64, o *oracleJSON) (OraclePoint, error) {
	if o.Market == nil || *o.Market == "" {
		return OraclePoint{}, fmt.Errorf("%s.market: missing", where)
	}
	if o.Price == nil {
		return OraclePoint{}, fmt.Errorf("%s.price: missing (a decimal string of quote units, e.g. \"2000\")", where)
	}
	p := OraclePoint{AtUs: atUs, Market: *o.Market}
	if err := parseUnits18(&p.Price, *o.Price); err != nil {
		return OraclePoint{}, fmt.Errorf("%s.price: %w", where, err)
	}
	return p, nil
}

func parseEvent(where string, atUs int64, e *eventJSON) (Event, error) {
	if e.Method == nil {
		return Event{}, fmt.Errorf("%s.method: missing", where)
	}
	m := *e.Method
	if !strings.HasPrefix(m, "lab_") && !slices.Contains(TimelineMethods, m) || m == "lab_scenario" {
		return Event{}, fmt.Errorf("%s.method: %q cannot be on a timeline (lab_ controls, %s)", where, m, strings.Join(TimelineMethods, ", "))
	}
	params := bytes.TrimSpace(e.Params)
	switch {
	case len(params) == 0 || string(params) == "null":
		params = []byte("[]")
	case params[0] != '[':
		return Event{}, fmt.Errorf("%s.params: want a JSON array", where)
	}
	return Event{AtUs: atUs, Method: m, Params: params}, nil
}

// parseWalks reads oracle_walk: at most WalksMax, one per market.
func (sc *Scenario) parseWalks(raw []json.RawMessage) error {
	if len(raw) > WalksMax {
		return fmt.Errorf("oracle_walk: %d walks, more than %d", len(raw), WalksMax)
	}
	for i, r := range raw {
		where := fmt.Sprintf("oracle_walk[%d]", i)
		var w walkJSON
		if err := decode(r, &w, where+"."); err != nil {
			return err
		}
		switch {
		case w.Market == nil || *w.Market == "":
			return fmt.Errorf("%s.market: missing", where)
		case w.Bps == nil || *w.Bps < 1 || *w.Bps > WalkBpsMax:
			return fmt.Errorf("%s.bps: want an integer in [1, %d]", where, WalkBpsMax)
		case w.EveryS == nil:
			return fmt.Errorf("%s.every_s: missing", where)
		}
		every, err := seconds(where+".every_s", *w.EveryS, DurationMax)
		if err == nil && every == 0 {
			err = fmt.Errorf("%s.every_s: must be > 0", where)
		}
		if err != nil {
			return err
		}
		for j, prev := range sc.Walks {
			if prev.Market == *w.Market {
				return fmt.Errorf("%s.market: %s walks already (oracle_walk[%d])", where, prev.Market, j)
			}
		}
		sc.Walks = append(sc.Walks, Walk{Market: *w.Market, Bps: *w.Bps, EveryUs: every})
	}
	return nil
}

// at reads an entry's at_s: required, in [0, duration_s).
func (sc *Scenario) at(where string, atS *float64) (int64, error) {
	if atS == nil {
		return 0, fmt.Errorf("%s.at_s: missing", where)
	}
	us, err := seconds(where+".at_s", *atS, DurationMax)
	if err == nil && us >= sc.DurationUs {
		err = fmt.Errorf("%s.at_s: %v is not before duration_s (%v)", where, *atS, float64(sc.DurationUs)/1e6)
	}
	return us, err
}

// seconds converts a non-negative number of seconds, at most max, to µs.
func seconds(field string, s float64, max int64) (int64, error) {
	if math.IsNaN(s) || s < 0 || s > float64(max) {
		return 0, fmt.Errorf("%s: %v out of [0, %d] seconds", field, s, max)
	}
	return int64(math.Round(s * 1e6)), nil
}

// decode unmarshals one JSON object into v, refusing unknown keys and
// trailing data; errors name the field below prefix.
func decode(data []byte, v any, prefix string) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	err := d.Decode(v)
	if err == nil && d.More() {
		err = errors.New("trailing data after the object")
	}
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("%s%s: want %s, got JSON %s", prefix, te.Field, te.Type, te.Value)
	case errors.As(err, &te) && prefix == "":
		return fmt.Errorf("want an object, got JSON %s", te.Value)
	case errors.As(err, &te):
		return fmt.Errorf("%s: want an object, got JSON %s", strings.TrimSuffix(prefix, "."), te.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("%sunknown key %s", prefix, strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return fmt.Errorf("%s%v", prefix, err)
}

// parseUnits18 reads a positive decimal number of whole units ("2000",
// "1999.5") as an 18-decimal integer, at most PriceUnitsMax units.
func parseUnits18(dst *uint256.Int, s string) error {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 18 || strings.Trim(whole+frac, "0123456789") != "" || len(whole) > 13 {
		return fmt.Errorf("%q is not a decimal number of at most 18 decimals", s)
	}
	digits := strings.TrimLeft(whole+frac+strings.Repeat("0", 18-len(frac)), "0")
	if digits == "" {
		return fmt.Errorf("%q out of (0, %d]", s, PriceUnitsMax)
	}
	if err := dst.SetFromDecimal(digits); err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	max := new(uint256.Int).Mul(uint256.NewInt(PriceUnitsMax), uint256.NewInt(1e18))
	if dst.Gt(max) {
		return fmt.Errorf("%q out of (0, %d]", s, PriceUnitsMax)
	}
	return nil
}
