package rpc

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ledgervenue/node/codec/jsonrpc"
)

// Prefix is the service's own prefix as the node writes it on the wire
// (Config.Prefix, ledgerd --prefix): SPEC.md's neutral `svc_` by default,
// or the live network's `pod_`, which its own SDK sends and decodes. It
// names the field `svc_metadata`/`pod_metadata` of transactions, receipts
// and logs and `svc_token`/`pod_token` of the bridge configuration. Method
// names and subscription types are accepted with either prefix in either
// mode (canonicalMethods, subs.ParseChannel). docs/live.md.
type Prefix uint8

const (
	PrefixSvc Prefix = iota // SPEC.md's names: the default
	PrefixPod               // the live network's names
)

// ParsePrefix reads a --prefix value: svc or pod.
func ParsePrefix(s string) (Prefix, error) {
	switch s {
	case "svc":
		return PrefixSvc, nil
	case "pod":
		return PrefixPod, nil
	}
	return 0, fmt.Errorf("want svc or pod, got %q", s)
}

func (p Prefix) String() string {
	if p == PrefixPod {
		return "pod"
	}
	return "svc"
}

// shape is what the Config selects of an answer's shape: the forms strict
// client decoders need (Config.Compat) and the key of the metadata field
// (Config.Prefix), built once so the encoders only append it.
type shape struct {
	compat bool
	meta   string // `,"svc_metadata":` or `,"pod_metadata":`
}

func newShape(compat bool, p Prefix) shape {
	return shape{compat: compat, meta: `,"` + p.String() + `_metadata":`}
}

// spec is sh with the spec's shapes: the svc_ methods and channels keep
// them in compat mode, which is for the eth_ decoders of client libraries.
func (sh shape) spec() shape { return shape{meta: sh.meta} }

// livePrefix is the live network's prefix of its own methods.
const livePrefix = "pod_"

// liveMethods maps each svc_ method of methodNames to its pod_ name.
var liveMethods = func() map[string][]byte {
	m := make(map[string][]byte)
	for _, name := range methodNames {
		if rest, ok := strings.CutPrefix(name, "svc_"); ok {
			m[livePrefix+rest] = []byte(name)
		}
	}
	return m
}()

// canonicalMethods renames the pod_ methods of reqs to their svc_ names,
// which is how the rest of the dispatcher knows them; a pod_ name with no
// svc_ method stays as it is (method not found).
func canonicalMethods(reqs []jsonrpc.Request) {
	for i := range reqs {
		if m := reqs[i].Method; bytes.HasPrefix(m, []byte(livePrefix)) {
			if name, ok := liveMethods[string(m)]; ok {
				reqs[i].Method = name
			}
		}
	}
}

// parse parses a body as the parser does and gives its pod_ methods their
// svc_ names.
func (sc *scratch) parse(body []byte) ([]jsonrpc.Request, bool, *jsonrpc.Error) {
	reqs, batch, err := sc.parser.Parse(body)
	canonicalMethods(reqs)
	return reqs, batch, err
}
