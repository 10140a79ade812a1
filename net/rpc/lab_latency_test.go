package rpc

import (
	"slices"
	"testing"
	"time"

	"github.com/valyala/fastjson"
)

func mustRule(t *testing.T, js string) *latencyRule {
	t.Helper()
	r, err := parseRule(fastjson.MustParse(js), 1)
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return r
}

func draws(r *latencyRule, k, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = ruleSet{r}.draw(k, 1, nil)
	}
	return out
}

// TestLatencyDrawSeeded: the same seed draws the same delays, for every
// distribution and each kind on its own stream; another seed draws
// others; draws stay in [0, LatencyMsMax] ms and near the asked mean.
func TestLatencyDrawSeeded(t *testing.T) {
	for _, d := range []struct {
		dist       string
		mean, sdev float64
	}{
		{`{"dist":"uniform","min_ms":10,"max_ms":30}`, 20, 6},
		{`{"dist":"normal","mean_ms":20,"sd_ms":5}`, 20, 5},
		{`{"dist":"exponential","mean_ms":20}`, 20, 20},
	} {
		rule := func(seed string) *latencyRule {
			return mustRule(t, `{"scope":"all","answers":`+d.dist+`,"notifications":`+d.dist+`,"seed":`+seed+`}`)
		}
		const n = 2000
		a, b := draws(rule("42"), kindAnswers, n), draws(rule("42"), kindAnswers, n)
		if !slices.Equal(a, b) {
			t.Fatalf("%s: seed 42 drew two sequences", d.dist)
		}
		if slices.Equal(a, draws(rule("43"), kindAnswers, n)) {
			t.Fatalf("%s: seeds 42 and 43 drew the same", d.dist)
		}
		if slices.Equal(a, draws(rule("42"), kindNotifications, n)) {
			t.Fatalf("%s: answers and notifications share a stream", d.dist)
		}
		var sum time.Duration
		for _, x := range a {
			if x < 0 || x > LatencyMsMax*time.Millisecond {
				t.Fatalf("%s: drew %v", d.dist, x)
			}
			sum += x
		}
		// The sample mean of n draws is within 4 standard errors.
		mean := float64(sum/n) / float64(time.Millisecond)
		if se := d.sdev / 44.7; mean < d.mean-4*se || mean > d.mean+4*se {
			t.Fatalf("%s: sample mean %.2f ms, want %.0f", d.dist, mean, d.mean)
		}
	}
	if got := draws(mustRule(t, `{"scope":"all","answers":{"ms":7.5}}`), kindAnswers, 3); !slices.Equal(got, []time.Duration{7500 * time.Microsecond, 7500 * time.Microsecond, 7500 * time.Microsecond}) {
		t.Fatalf("fixed: %v", got)
	}
	// A normal draw below 0 is clamped to 0.
	for _, x := range draws(mustRule(t, `{"scope":"all","answers":{"dist":"normal","mean_ms":0,"sd_ms":100}}`), kindAnswers, 100) {
		if x < 0 {
			t.Fatalf("normal drew %v", x)
		}
	}
}

// TestLatencyMatching: the most specific matching rule with a
// distribution for the kind wins; among equals the newest.
func TestLatencyMatching(t *testing.T) {
	all := mustRule(t, `{"scope":"all","answers":{"ms":1},"notifications":{"ms":2}}`)
	conn := mustRule(t, `{"scope":"connection","connection":"0x5","answers":{"ms":3}}`)
	acct := mustRule(t, `{"scope":"account","account":"0x00000000000000000000000000000000000000aa","answers":{"ms":4}}`)
	all2 := mustRule(t, `{"scope":"all","answers":{"ms":5}}`)
	rs := ruleSet{all, conn, acct, all2}
	var tied connTies
	tied.add([20]byte{19: 0xaa})
	for _, c := range []struct {
		kind int
		conn uint64
		ties *connTies
		want time.Duration
	}{
		{kindAnswers, 5, &tied, 3 * time.Millisecond},       // connection beats account
		{kindAnswers, 6, &tied, 4 * time.Millisecond},       // account beats all
		{kindAnswers, 6, nil, 5 * time.Millisecond},         // the newest all
		{kindNotifications, 5, &tied, 2 * time.Millisecond}, // only all delays notifications
	} {
		if got := rs.draw(c.kind, c.conn, c.ties); got != c.want {
			t.Fatalf("%+v: %v", c, got)
		}
	}
}
