package ratelimit

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Bounds of a configuration.
const (
	// CapacityMax bounds a bucket's capacity (weight units).
	CapacityMax = 1_000_000_000
	// PeriodMin and PeriodMax bound the period of N/PERIOD.
	PeriodMin = time.Millisecond
	PeriodMax = 24 * time.Hour
	// WeightMax bounds one method's weight.
	WeightMax = 10_000
	// WeightsMax bounds the weight overrides of one configuration.
	WeightsMax = 256
	// MethodNameMax bounds the length of a method name in an override.
	MethodNameMax = 64
)

// Bucket is a token bucket's shape: Capacity weight units at most (the
// burst), refilled at RefillPerS units a second. The zero Bucket is "no
// limit of this kind".
type Bucket struct {
	Capacity   float64
	RefillPerS float64
}

// On reports whether the bucket limits anything.
func (b Bucket) On() bool { return b.Capacity > 0 || b.RefillPerS > 0 }

// Config is the rate limits in force. The zero Config is off.
type Config struct {
	// Address is the budget of each remote address (the client's IP),
	// charged by every limited call.
	Address Bucket
	// Account is the budget of each account that signs a transaction,
	// charged by eth_ and svc_sendRawTransaction only.
	Account Bucket
	// Cancel is the reserve each address and each account keeps for
	// transactions whose orderbook calls are all cancels: such a
	// transaction that its budget cannot pay is paid from the reserve.
	Cancel Bucket
	// Weights are the overrides of DefaultWeights (method → weight).
	Weights map[string]uint32
}

// On reports whether c limits anything.
func (c *Config) On() bool { return c != nil && (c.Address.On() || c.Account.On()) }

// DefaultCancel is the cancel reserve of a configuration that names none:
// 20 cancel transactions in a burst, 2 a second after that.
var DefaultCancel = Bucket{Capacity: 20, RefillPerS: 2}

// DefaultWeights are the weights of the calls that cost more than 1 (every
// other call weighs 1; a transaction weighs 1 plus its orderbook calls):
// the reads that scan a range or a history.
var DefaultWeights = map[string]uint32{
	"eth_getLogs":               10,
	"eth_feeHistory":            5,
	"ob_getFills":               5,
	"ob_getCandles":             5,
	"ob_getRankedPositions":     5,
	"ob_getBackstopTransfers":   5,
	"svc_getTransactions":       5,
	"svc_listTransactions":      5,
	"svc_listAccountReceipts":   5,
	"svc_listConfirmedReceipts": 5,
	"svc_getVoteBatches":        5,
	"svc_getAccountDiagnostics": 5,
}

// ParseSpec parses the --rate-limit flag's SPEC: comma-separated key=value
//
//	address=N/PERIOD    each remote address: N units a burst, N per PERIOD
//	account=N/PERIOD    each signing account, likewise
//	cancel=N/PERIOD     the cancel reserve (default 20/10s)
//	KIND.burst=B        the capacity of KIND (address, account, cancel), if not N
//	weight.METHOD=W     METHOD weighs W (0..10000)
//
// PERIOD is a Go duration (1ms..24h). An empty SPEC or "off" is off. The
// errors name the key.
func ParseSpec(spec string) (Config, error) {
	var c Config
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "off" {
		return c, nil
	}
	seen := map[string]bool{}
	bursts := map[string]float64{}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return Config{}, errors.New("want key=value, got " + strconv.Quote(kv))
		}
		if seen[k] {
			return Config{}, errors.New(k + ": given twice")
		}
		seen[k] = true
		switch k {
		case "address", "account", "cancel":
			b, err := parseRate(v)
			if err != nil {
				return Config{}, errors.New(k + ": " + err.Error())
			}
			*c.bucket(k) = b
		case "address.burst", "account.burst", "cancel.burst":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil || n > CapacityMax {
				return Config{}, errors.New(k + ": want an integer in [0, " + strconv.Itoa(CapacityMax) + "], got " + strconv.Quote(v))
			}
			bursts[strings.TrimSuffix(k, ".burst")] = float64(n)
		default:
			m, ok := strings.CutPrefix(k, "weight.")
			if !ok {
				return Config{}, errors.New(k + ": unknown key (want address, account, cancel, KIND.burst or weight.METHOD)")
			}
			w, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				w = WeightMax + 1
			}
			if err := c.setWeight(m, w); err != nil {
				return Config{}, errors.New(k + ": " + err.Error())
			}
		}
	}
	for kind, n := range bursts {
		b := c.bucket(kind)
		if !b.On() {
			return Config{}, errors.New(kind + ".burst: needs " + kind + "=N/PERIOD")
		}
		b.Capacity = n
	}
	return c, c.check(seen["cancel"])
}

// bucket returns the field of kind (address, account or cancel).
func (c *Config) bucket(kind string) *Bucket {
	switch kind {
	case "address":
		return &c.Address
	case "account":
		return &c.Account
	}
	return &c.Cancel
}

// setWeight records the override method=w, checked.
func (c *Config) setWeight(method string, w uint64) error {
	switch {
	case method == "" || len(method) > MethodNameMax:
		return errors.New("want a method name of 1.." + strconv.Itoa(MethodNameMax) + " bytes")
	case w > WeightMax:
		return errors.New("want an integer weight in [0, " + strconv.Itoa(WeightMax) + "]")
	case len(c.Weights) >= WeightsMax:
		return errors.New("more than " + strconv.Itoa(WeightsMax) + " weight overrides")
	case Exempt(method):
		return errors.New("the lab_, admin_ and anvil controls are never limited")
	}
	if c.Weights == nil {
		c.Weights = map[string]uint32{}
	}
	c.Weights[method] = uint32(w)
	return nil
}

// check completes a parsed configuration: the default cancel reserve
// unless one was given (0/PERIOD or null: none), and a limit of some kind
// when anything is configured.
func (c *Config) check(cancelGiven bool) error {
	if !c.Address.On() && !c.Account.On() {
		if c.Cancel.On() || len(c.Weights) > 0 {
			return errors.New("address, account: name at least one of them (or nothing: off)")
		}
		return nil
	}
	if !cancelGiven {
		c.Cancel = DefaultCancel
	}
	return nil
}

// parseRate parses N/PERIOD.
func parseRate(v string) (Bucket, error) {
	ns, ps, ok := strings.Cut(v, "/")
	n, err := strconv.ParseUint(ns, 10, 64)
	if !ok || err != nil || n > CapacityMax {
		return Bucket{}, errors.New("want N/PERIOD like 1200/60s with N in [0, " + strconv.Itoa(CapacityMax) + "], got " + strconv.Quote(v))
	}
	p, err := time.ParseDuration(ps)
	if err != nil || p < PeriodMin || p > PeriodMax {
		return Bucket{}, errors.New("want a PERIOD from 1ms to 24h like 60s, got " + strconv.Quote(ps))
	}
	return Bucket{Capacity: float64(n), RefillPerS: float64(n) / p.Seconds()}, nil
}

// FromJSON builds a Config from lab_setRateLimits' object form: each of
// "address", "account" and "cancel" an object {"capacity", "refill_per_s"}
// (or null), and "weights" an object of method → weight. Strict: unknown
// keys and values out of range are refused, naming the field. The caller
// decodes the JSON into members, in order.
func FromJSON(members []Member) (Config, error) {
	var c Config
	seen := map[string]bool{}
	for _, m := range members {
		if seen[m.Key] {
			return Config{}, errors.New(m.Key + ": given twice")
		}
		seen[m.Key] = true
		switch m.Key {
		case "address", "account", "cancel":
			if m.Null {
				continue
			}
			if m.Bucket == nil {
				return Config{}, errors.New(m.Key + ": want an object {capacity, refill_per_s} or null")
			}
			b := *m.Bucket
			if !(b.Capacity >= 0 && b.Capacity <= CapacityMax) || math.Trunc(b.Capacity) != b.Capacity {
				return Config{}, errors.New(m.Key + ".capacity: want an integer in [0, " + strconv.Itoa(CapacityMax) + "]")
			}
			if !(b.RefillPerS > 0 && b.RefillPerS <= CapacityMax) {
				return Config{}, errors.New(m.Key + ".refill_per_s: want a number in (0, " + strconv.Itoa(CapacityMax) + "]")
			}
			*c.bucket(m.Key) = b
		case "weights":
			for _, w := range m.Weights {
				if err := c.setWeight(w.Method, w.Weight); err != nil {
					return Config{}, errors.New("weights." + w.Method + ": " + err.Error())
				}
			}
		default:
			return Config{}, errors.New(m.Key + ": unknown key (want address, account, cancel or weights)")
		}
	}
	return c, c.check(seen["cancel"])
}

// Member is one member of lab_setRateLimits' object, decoded by the
// caller: a bucket (or Null), or for "weights" its entries.
type Member struct {
	Key     string
	Null    bool
	Bucket  *Bucket
	Weights []Weight
}

// Weight is one weight override.
type Weight struct {
	Method string
	Weight uint64
}

// WeightTable returns the weights that are not 1 (defaults with c's
// overrides), sorted by method.
func (c *Config) WeightTable() []Weight {
	all := map[string]uint32{}
	for m, w := range DefaultWeights {
		all[m] = w
	}
	for m, w := range c.Weights {
		all[m] = w
	}
	out := make([]Weight, 0, len(all))
	for m, w := range all {
		if w != 1 {
			out = append(out, Weight{m, uint64(w)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Method < out[j].Method })
	return out
}

// Exempt reports the controls that are never limited: lab_, admin_ and
// the anvil-compatible ones (anvil_, evm_, hardhat_), else a test could
// lock itself out.
func Exempt[T string | []byte](method T) bool {
	for _, p := range [...]string{"lab_", "admin_", "anvil_", "evm_", "hardhat_"} {
		if len(method) >= len(p) && string(method[:len(p)]) == p {
			return true
		}
	}
	return false
}
