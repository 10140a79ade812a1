package rpc

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/valyala/fastjson"
)

// Latency rules (lab_setLatency, docs/lab.md "Delivery faults"): how long
// the transport holds an answer or a notification back (net/server,
// delay.go). A rule has a scope (every connection, one connection, or the
// connections tied to an account), and a distribution per kind of message.
// Every draw comes from the rule's own PCG seeded with its seed, one stream
// per kind, so the same rules meeting the same messages in the same order
// draw the same delays.
//
// Matching, per message kind: among the rules that give a distribution for
// that kind and match the connection, the most specific scope wins
// (connection, then account, then all); among equals, the newest.

// Bounds of the latency rules.
const (
	// LatencyRulesMax bounds the rules in force; lab_setLatency beyond it
	// answers -32005.
	LatencyRulesMax = 64
	// LatencyMsMax bounds every millisecond figure of a distribution (and
	// so one draw): the transport holds a message at most this long
	// (server.DelayMax).
	LatencyMsMax = 60_000
)

// Message kinds a rule delays.
const (
	kindAnswers = iota
	kindNotifications
	kinds
)

var kindNames = [kinds]string{"answers", "notifications"}

// Scopes, in increasing specificity.
const (
	scopeAll = iota
	scopeAccount
	scopeConnection
)

var scopeNames = [...]string{scopeAll: "all", scopeAccount: "account", scopeConnection: "connection"}

// Distributions.
const (
	distFixed = iota
	distUniform
	distNormal
	distExponential
)

// dist draws delays in ms. a and b are: fixed a; uniform [a, b]; normal
// mean a, sd b; exponential mean a.
type dist struct {
	kind int
	a, b float64
	mu   sync.Mutex // guards rng: messages of many connections draw
	rng  *rand.Rand
}

// draw returns the next delay, clamped to [0, LatencyMsMax] ms.
func (d *dist) draw() time.Duration {
	ms := d.a
	if d.kind != distFixed {
		d.mu.Lock()
		switch d.kind {
		case distUniform:
			ms = d.a + d.rng.Float64()*(d.b-d.a)
		case distNormal:
			ms = d.a + d.rng.NormFloat64()*d.b
		case distExponential:
			ms = d.rng.ExpFloat64() * d.a
		}
		d.mu.Unlock()
	}
	ms = min(max(ms, 0), LatencyMsMax)
	return time.Duration(ms * float64(time.Millisecond))
}

// appendJSON appends the distribution in lab_setLatency's shape.
func (d *dist) appendJSON(dst []byte) []byte {
	num := func(dst []byte, k string, v float64) []byte {
		dst = append(append(append(dst, `"`...), k...), `":`...)
		return strconv.AppendFloat(dst, v, 'f', -1, 64)
	}
	switch d.kind {
	case distUniform:
		dst = num(append(dst, `{"dist":"uniform",`...), "min_ms", d.a)
		dst = num(append(dst, ','), "max_ms", d.b)
	case distNormal:
		dst = num(append(dst, `{"dist":"normal",`...), "mean_ms", d.a)
		dst = num(append(dst, ','), "sd_ms", d.b)
	case distExponential:
		dst = num(append(dst, `{"dist":"exponential",`...), "mean_ms", d.a)
	default:
		dst = num(append(dst, '{'), "ms", d.a)
	}
	return append(dst, '}')
}

// latencyRule is one rule in force. Immutable but for its dists' PRNGs.
type latencyRule struct {
	id      uint64
	scope   int
	conn    uint64
	account core.Address
	seed    uint64
	dists   [kinds]*dist // nil: the rule leaves that kind alone
}

// matches ranks how r applies to a connection: -1 not at all, else its
// scope (higher is more specific).
func (r *latencyRule) matches(conn uint64, ties *connTies) int {
	switch r.scope {
	case scopeConnection:
		if r.conn == conn {
			return scopeConnection
		}
	case scopeAccount:
		if ties != nil && ties.has(r.account) {
			return scopeAccount
		}
	default:
		return scopeAll
	}
	return -1
}

// ruleSet is the rules in force, oldest first; replaced whole, never
// changed (copy on write).
type ruleSet []*latencyRule

// draw returns the delay of a message of kind k on connection conn (its
// account ties: nil for none), from the rule that wins.
func (rs ruleSet) draw(k int, conn uint64, ties *connTies) time.Duration {
	var best *latencyRule
	rank := -1
	for _, r := range rs {
		if r.dists[k] == nil {
			continue
		}
		if m := r.matches(conn, ties); m >= rank && m >= 0 { // newer wins among equals
			best, rank = r, m
		}
	}
	if best == nil {
		return 0
	}
	return best.dists[k].draw()
}

func (r *latencyRule) appendJSON(dst []byte) []byte {
	dst = jsonrpc.AppendQuantity(append(dst, `{"id":`...), r.id)
	dst = jsonrpc.AppendString(append(dst, `,"scope":`...), scopeNames[r.scope])
	switch r.scope {
	case scopeConnection:
		dst = jsonrpc.AppendQuantity(append(dst, `,"connection":`...), r.conn)
	case scopeAccount:
		dst = jsonrpc.AppendData(append(dst, `,"account":`...), r.account[:])
	}
	for k, d := range r.dists {
		if d != nil {
			dst = d.appendJSON(append(append(append(dst, `,"`...), kindNames[k]...), `":`...))
		}
	}
	dst = strconv.AppendUint(append(dst, `,"seed":`...), r.seed, 10)
	return append(dst, '}')
}

// parseRule decodes lab_setLatency's rule; self is the calling connection
// (0: none, a call run off its connection).
func parseRule(v *fastjson.Value, self uint64) (*latencyRule, *jsonrpc.Error) {
	if v == nil {
		return nil, missingParam(0)
	}
	obj, err := v.Object()
	if err != nil {
		return nil, jsonrpc.InvalidParams("rule: want an object")
	}
	if bad := unknownKey(obj, "rule", " (takes scope, connection, account, answers, notifications, seed)",
		"scope", "connection", "account", "answers", "notifications", "seed"); bad != nil {
		return nil, bad
	}
	r := &latencyRule{scope: slices.Index(scopeNames[:], string(v.GetStringBytes("scope")))}
	if r.scope < 0 {
		return nil, jsonrpc.InvalidParams(`scope: want "all", "connection" or "account"`)
	}
	var bad *jsonrpc.Error
	c, a := v.Get("connection"), v.Get("account")
	switch {
	case c != nil && r.scope != scopeConnection:
		return nil, jsonrpc.InvalidParams(`connection: only with scope "connection"`)
	case a != nil && r.scope != scopeAccount:
		return nil, jsonrpc.InvalidParams(`account: only with scope "account"`)
	case r.scope == scopeConnection && c == nil:
		if self == 0 {
			return nil, jsonrpc.InvalidParams("connection: required when the call is not served on its connection")
		}
		r.conn = self
	case r.scope == scopeConnection:
		if r.conn, bad = quantityField("connection", c); bad != nil {
			return nil, bad
		}
	case r.scope == scopeAccount:
		if a == nil {
			return nil, jsonrpc.InvalidParams(`account: required with scope "account"`)
		}
		addr, err := jsonrpc.ParseAddress(a)
		if err != nil {
			return nil, jsonrpc.InvalidParams("account: want a 20-byte hex address")
		}
		r.account = core.Address(addr)
	}
	if s := v.Get("seed"); s != nil {
		if r.seed, bad = quantityField("seed", s); bad != nil {
			return nil, bad
		}
	}
	for k := range kinds {
		dv := v.Get(kindNames[k])
		if dv == nil {
			continue
		}
		d, err := parseDist(kindNames[k], dv)
		if err != nil {
			return nil, err
		}
		if d.kind != distFixed {
			d.rng = rand.New(rand.NewPCG(r.seed, uint64(k)+1))
		}
		r.dists[k] = d
	}
	if r.dists[kindAnswers] == nil && r.dists[kindNotifications] == nil {
		return nil, jsonrpc.InvalidParams("rule: give answers, notifications or both")
	}
	return r, nil
}

// unknownKey refuses the first key of obj not in allowed: "<what>: unknown
// key "k"<hint>".
func unknownKey(obj *fastjson.Object, what, hint string, allowed ...string) *jsonrpc.Error {
	var bad *jsonrpc.Error
	obj.Visit(func(k []byte, _ *fastjson.Value) {
		if bad == nil && !slices.Contains(allowed, string(k)) {
			bad = jsonrpc.InvalidParams(what + ": unknown key " + strconv.Quote(string(k)) + hint)
		}
	})
	return bad
}

// quantityField reads a uint64 field: a quantity string or an integer.
func quantityField(name string, v *fastjson.Value) (uint64, *jsonrpc.Error) {
	n, err := jsonrpc.ParseQuantity(v)
	if err != nil {
		return 0, jsonrpc.InvalidParams(name + `: want a quantity ("0x…") or a non-negative integer`)
	}
	return n, nil
}

// parseDist decodes a DIST: {"ms":N}, {"dist":"uniform","min_ms":a,"max_ms":b},
// {"dist":"normal","mean_ms":m,"sd_ms":s} or {"dist":"exponential","mean_ms":m}.
func parseDist(name string, v *fastjson.Value) (*dist, *jsonrpc.Error) {
	obj, err := v.Object()
	if err != nil {
		return nil, jsonrpc.InvalidParams(name + ": want an object such as {\"ms\":50}")
	}
	d := &dist{}
	var keys []string
	switch kind := string(v.GetStringBytes("dist")); {
	case v.Get("dist") == nil || kind == "fixed":
		d.kind, keys = distFixed, []string{"ms"}
	case kind == "uniform":
		d.kind, keys = distUniform, []string{"min_ms", "max_ms"}
	case kind == "normal":
		d.kind, keys = distNormal, []string{"mean_ms", "sd_ms"}
	case kind == "exponential":
		d.kind, keys = distExponential, []string{"mean_ms"}
	default:
		return nil, jsonrpc.InvalidParams(name + `.dist: want "fixed", "uniform", "normal" or "exponential"`)
	}
	if bad := unknownKey(obj, name, " for this distribution", append(keys, "dist")...); bad != nil {
		return nil, bad
	}
	vals := [2]*float64{&d.a, &d.b}
	for i, k := range keys {
		fv := v.Get(k)
		if fv == nil {
			return nil, jsonrpc.InvalidParams(name + "." + k + ": required")
		}
		f, err := fv.Float64()
		if err != nil || math.IsNaN(f) || f < 0 || f > LatencyMsMax {
			return nil, jsonrpc.InvalidParams(name + "." + k + ": want a number of ms in [0, " + strconv.Itoa(LatencyMsMax) + "]")
		}
		*vals[i] = f
	}
	if d.kind == distUniform && d.a > d.b {
		return nil, jsonrpc.InvalidParams(name + ": min_ms must not exceed max_ms")
	}
	return d, nil
}
