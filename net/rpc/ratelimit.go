package rpc

import (
	"errors"
	"math"
	"net/netip"
	"slices"
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/ratelimit"
	"github.com/valyala/fastjson"
)

// Rate-limit emulation (docs/lab.md, "Rate-limit emulation"; the buckets
// are net/ratelimit's). Off by default: then the only cost of a call is
// the load of Service.limits in run. On, run charges each call that is not
// a control (ratelimit.Exempt) its weight to the caller's address before
// it runs; a signed send is charged once decoded (rawTx), to the address
// and to its signer, 1 plus its orderbook calls, so a cancel-only one can
// use the cancel reserve. A refused call answers -32005 and never runs:
// it reaches neither the sequencer nor the ledger. In a batch it refuses
// only itself. Over HTTP the status stays 200 (docs/lab.md says why).

// SetRateLimits puts cfg in force with full buckets (a zero cfg turns the
// limits off).
func (s *Service) SetRateLimits(cfg ratelimit.Config) { s.limits.Store(ratelimit.New(cfg)) }

// RateLimited calls fn for each kind of limit with its refusals since
// start and its live buckets (0 when off), for the Prometheus metrics.
func (s *Service) RateLimited(fn func(limit string, refused uint64, buckets int)) {
	var n [ratelimit.Kinds]int
	if l := s.limits.Load(); l != nil {
		n[ratelimit.KindAddress], n[ratelimit.KindAccount] = l.Buckets()
	}
	for k := range ratelimit.Kinds {
		fn(ratelimit.KindNames[k], s.rateRefused[k].Load(), n[k])
	}
}

// CheckRateLimits checks cfg's weight overrides against the methods the
// node serves: a pod_ name becomes its svc_ name (as the dispatcher knows
// it), and a method it does not serve is refused, naming the key (a typo
// would otherwise weigh nothing).
func CheckRateLimits(cfg *ratelimit.Config) error {
	names := make([]string, 0, len(cfg.Weights))
	for m := range cfg.Weights {
		names = append(names, m)
	}
	slices.Sort(names) // the first bad key, whatever the map's order
	for _, m := range names {
		name := m
		if svc, ok := liveMethods[m]; ok {
			name = string(svc)
		}
		if methodIndex([]byte(name)) == methodOther {
			return errors.New("weight." + m + ": not a method this node serves")
		}
		if name != m {
			cfg.Weights[name] = cfg.Weights[m]
			delete(cfg.Weights, m)
		}
	}
	return nil
}

// isSignedSend reports the methods charged once their transaction is
// decoded (limitTx).
func isSignedSend(m []byte) bool {
	return string(m) == "eth_sendRawTransaction" || string(m) == "svc_sendRawTransaction"
}

// limitCall charges the call's weight to its address, unless it is a
// control or a signed send (limitTx charges those).
// REQUIRES: c.rl != nil.
func (c *call) limitCall() *jsonrpc.Error {
	if ratelimit.Exempt(c.req.Method) || isSignedSend(c.req.Method) {
		return nil
	}
	return c.charge(nil, c.rl.Weight(c.req.Method), false)
}

// limitTx charges a signed send: the method's weight (1 by default) plus
// its orderbook calls, to the address and to the signer. A transaction
// whose orderbook calls are all cancels (cancel, cancelTrigger) may use
// the cancel reserve.
// REQUIRES: c.rl != nil, tx prepared (toCoreTx).
func (c *call) limitTx(tx *core.Tx) *jsonrpc.Error {
	var calls, cancels uint32
	if p := tx.Pre; p != nil && p.Reason == clob.OK {
		for i := range p.Env.Intents {
			calls++
			if k := p.Env.Intents[i].Kind; k == clob.IntentCancel || k == clob.IntentCancelTrigger {
				cancels++
			}
		}
	}
	acct := [20]byte(tx.From)
	return c.charge(&acct, c.rl.Weight(c.req.Method)+calls, calls > 0 && cancels == calls)
}

// charge takes w from the call's budgets, or returns the refusal.
func (c *call) charge(acct *[20]byte, w uint32, cancelOnly bool) *jsonrpc.Error {
	r, ok := c.rl.Take(c.ip, acct, w, cancelOnly)
	if ok {
		return nil
	}
	c.s.rateRefused[r.Kind].Add(1)
	key := c.ip.String()
	if r.Kind == ratelimit.KindAccount {
		key = string(jsonrpc.AppendData(nil, acct[:]))
		key = key[1 : len(key)-1] // unquoted
	}
	return rateLimitError(&r, key)
}

// rateLimitError is the refusal on the wire: -32005, "rate limit exceeded:
// <limit>", and data {limit, key, weight, budget, capacity, refill_per_s,
// retry_after_ms} (retry_after_ms -1: the weight is beyond the capacity).
func rateLimitError(r *ratelimit.Refusal, key string) *jsonrpc.Error {
	kind := ratelimit.KindNames[r.Kind]
	msg := "rate limit exceeded: " + kind
	if r.TableFull {
		msg += " (too many keys)"
	}
	d := append(make([]byte, 0, 192), `{"limit":"`...)
	d = append(d, kind...)
	d = jsonrpc.AppendString(append(d, `","key":`...), key)
	d = strconv.AppendUint(append(d, `,"weight":`...), uint64(r.Weight), 10)
	d = strconv.AppendFloat(append(d, `,"budget":`...), math.Floor(r.Tokens), 'f', -1, 64)
	d = strconv.AppendFloat(append(d, `,"capacity":`...), r.Bucket.Capacity, 'f', -1, 64)
	d = strconv.AppendFloat(append(d, `,"refill_per_s":`...), r.Bucket.RefillPerS, 'f', -1, 64)
	ms := int64(-1)
	if r.RetryAfter >= 0 {
		ms = int64(math.Ceil(float64(r.RetryAfter) / 1e6))
	}
	d = strconv.AppendInt(append(d, `,"retry_after_ms":`...), ms, 10)
	return &jsonrpc.Error{Code: jsonrpc.CodeLimitExceeded, Message: msg, Data: append(d, '}')}
}

// setRateLimits answers lab_setRateLimits [cfg]: cfg is the --rate-limit
// SPEC as a string, or the object lab_rateLimits reports as "config"; null,
// {}, "" or "off" turn the limits off. The new limits start with full
// buckets. It answers what lab_rateLimits reports as "config".
func (c *call) setRateLimits(dst []byte) ([]byte, *jsonrpc.Error) {
	cfg, err := rateLimitParam(c.req.Param(0))
	if err != nil {
		return dst, err
	}
	l := ratelimit.New(cfg)
	c.s.limits.Store(l)
	return appendRateConfig(dst, l), nil
}

// rateLimitParam decodes lab_setRateLimits' parameter.
func rateLimitParam(v *fastjson.Value) (ratelimit.Config, *jsonrpc.Error) {
	if v == nil || v.Type() == fastjson.TypeNull {
		return ratelimit.Config{}, nil
	}
	var (
		cfg ratelimit.Config
		err error
	)
	switch v.Type() {
	case fastjson.TypeString:
		cfg, err = ratelimit.ParseSpec(string(v.GetStringBytes()))
	case fastjson.TypeObject:
		var ms []ratelimit.Member
		if ms, err = rateMembers(v.GetObject()); err == nil {
			cfg, err = ratelimit.FromJSON(ms)
		}
	default:
		return cfg, jsonrpc.InvalidParams("rate limits: want the --rate-limit SPEC as a string, an object, or null")
	}
	if err == nil {
		err = CheckRateLimits(&cfg)
	}
	if err != nil {
		return cfg, jsonrpc.InvalidParams("rate limits: " + err.Error())
	}
	return cfg, nil
}

// rateMembers decodes the object form's members; ratelimit.FromJSON checks
// their values.
func rateMembers(o *fastjson.Object) ([]ratelimit.Member, error) {
	var (
		ms  []ratelimit.Member
		err error
	)
	o.Visit(func(k []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		m := ratelimit.Member{Key: string(k)}
		switch {
		case v.Type() == fastjson.TypeNull:
			m.Null = true
		case m.Key == "weights":
			wo, e := v.Object()
			if e != nil {
				err = errors.New("weights: want an object of method: weight")
				return
			}
			wo.Visit(func(mk []byte, wv *fastjson.Value) {
				w, e := wv.Uint64()
				if e != nil {
					w = ratelimit.WeightMax + 1 // refused by FromJSON, naming it
				}
				m.Weights = append(m.Weights, ratelimit.Weight{Method: string(mk), Weight: w})
			})
		case v.Type() == fastjson.TypeObject:
			b, e := rateBucket(m.Key, v.GetObject())
			if e != nil {
				err = e
				return
			}
			m.Bucket = &b
		}
		ms = append(ms, m)
	})
	return ms, err
}

// rateBucket decodes {capacity, refill_per_s}.
func rateBucket(kind string, o *fastjson.Object) (ratelimit.Bucket, error) {
	var (
		b    ratelimit.Bucket
		seen int
		err  error
	)
	o.Visit(func(k []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		var f *float64
		switch string(k) {
		case "capacity":
			f = &b.Capacity
		case "refill_per_s":
			f = &b.RefillPerS
		default:
			err = errors.New(kind + "." + string(k) + ": unknown key (want capacity, refill_per_s)")
			return
		}
		x, e := v.Float64()
		if e != nil {
			err = errors.New(kind + "." + string(k) + ": want a number")
			return
		}
		*f = x
		seen++
	})
	if err == nil && seen != 2 {
		err = errors.New(kind + ": want both capacity and refill_per_s")
	}
	return b, err
}

// rateLimits answers lab_rateLimits [key]: the configuration in force and
// the state of one budget: the caller's address without key, else key's
// (an IP address, or a 0x account).
func (c *call) rateLimits(dst []byte) ([]byte, *jsonrpc.Error) {
	kind, ip, acct := ratelimit.KindAddress, c.ip, [20]byte{}
	if v := c.req.Param(0); v != nil && v.Type() != fastjson.TypeNull {
		s := string(v.GetStringBytes())
		if a, perr := jsonrpc.ParseAddress(v); perr == nil {
			kind, acct = ratelimit.KindAccount, a
		} else if a, err := netip.ParseAddr(s); err == nil {
			ip = a.Unmap()
		} else {
			return dst, jsonrpc.InvalidParams("key: want an IP address or a 0x account, got " + strconv.Quote(s))
		}
	}
	l := c.s.limits.Load()
	dst = append(dst, `{"enabled":`...)
	dst = strconv.AppendBool(dst, l != nil)
	dst = appendRateConfig(append(dst, `,"config":`...), l)
	dst = append(dst, `,"bucket":`...)
	if l == nil {
		return append(dst, "null}"...), nil
	}
	var (
		st  ratelimit.State
		on  bool
		key string
		b   ratelimit.Bucket
	)
	cfg := l.Config()
	if kind == ratelimit.KindAddress {
		st, on = l.AddressState(ip)
		key, b = ip.String(), cfg.Address
	} else {
		st, on = l.AccountState(acct)
		key, b = string(jsonrpc.AppendData(nil, acct[:])), cfg.Account
		key = key[1 : len(key)-1]
	}
	if !on {
		return append(dst, "null}"...), nil
	}
	dst = append(append(append(dst, `{"limit":"`...), ratelimit.KindNames[kind]...), `","key":`...)
	dst = jsonrpc.AppendString(dst, key)
	dst = strconv.AppendBool(append(dst, `,"live":`...), st.Live)
	dst = strconv.AppendFloat(append(dst, `,"budget":`...), st.Tokens, 'f', 3, 64)
	dst = strconv.AppendFloat(append(dst, `,"cancel_reserve":`...), st.Reserve, 'f', 3, 64)
	dst = appendRateBucket(append(dst, ','), b)
	return append(dst, "}}"...), nil
}

// appendRateConfig appends the configuration of l (null: off) in
// lab_setRateLimits' object form, with the whole weight table.
func appendRateConfig(dst []byte, l *ratelimit.Limiter) []byte {
	if l == nil {
		return append(dst, "null"...)
	}
	cfg := l.Config()
	for i, k := range [...]struct {
		name string
		b    ratelimit.Bucket
	}{{"address", cfg.Address}, {"account", cfg.Account}, {"cancel", cfg.Cancel}} {
		sep := byte(',')
		if i == 0 {
			sep = '{'
		}
		dst = append(dst, sep)
		dst = append(append(append(dst, '"'), k.name...), `":`...)
		if !k.b.On() {
			dst = append(dst, "null"...)
			continue
		}
		dst = appendRateBucket(append(dst, '{'), k.b)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"weights":{`...)
	for i, w := range cfg.WeightTable() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonrpc.AppendString(dst, w.Method)
		dst = strconv.AppendUint(append(dst, ':'), w.Weight, 10)
	}
	return append(dst, "}}"...)
}

func appendRateBucket(dst []byte, b ratelimit.Bucket) []byte {
	dst = strconv.AppendFloat(append(dst, `"capacity":`...), b.Capacity, 'f', -1, 64)
	return strconv.AppendFloat(append(dst, `,"refill_per_s":`...), b.RefillPerS, 'f', -1, 64)
}

// appendRateMetrics appends svc_metrics' rate_limits: {enabled, refused:
// {address, account}, buckets: {address, account}}.
func (s *Service) appendRateMetrics(dst []byte) []byte {
	dst = strconv.AppendBool(append(dst, `{"enabled":`...), s.limits.Load() != nil)
	var refused, buckets []byte
	s.RateLimited(func(limit string, n uint64, b int) {
		sep := byte(',')
		if refused == nil {
			sep = '{'
		}
		refused = strconv.AppendUint(append(append(append(refused, sep, '"'), limit...), `":`...), n, 10)
		buckets = strconv.AppendInt(append(append(append(buckets, sep, '"'), limit...), `":`...), int64(b), 10)
	})
	dst = append(append(append(dst, `,"refused":`...), refused...), '}')
	dst = append(append(append(dst, `,"buckets":`...), buckets...), '}')
	return append(dst, '}')
}
