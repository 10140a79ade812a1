package abi

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	gethabi "github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/ledgervenue/node/core/clob"
)

// FuzzDecodeEveryFunction fuzzes the arguments of each function of the
// orderbook ABI (orderbook.abi.json, views included) behind its own
// selector, so every input reaches that function's argument decoder instead
// of dying at the selector. Decode must never panic and must answer a
// decoder reason; a view (balanceOf, withdrawableBalance: eth_call answers
// those) is no transaction; and arguments it accepts are ones go-ethereum
// unpacks as the same function's. Seeds: one encoded call per function (a
// function added to the ABI without a seed fails the target).
func FuzzDecodeEveryFunction(f *testing.F) {
	methods := abiMethods()
	seeded := make([]bool, len(methods))
	seed := func(data []byte) {
		for i, m := range methods {
			if bytes.Equal(data[:4], m.ID) {
				f.Add(uint8(i), data[4:])
				seeded[i] = true
				return
			}
		}
		f.Fatalf("seed with selector %x names no function of the ABI", data[:4])
	}
	for _, c := range sampleCalls(f) {
		seed(c.data)
	}
	for _, m := range methods {
		if m.IsConstant() {
			data, err := orderbookABI.Pack(m.Name, common.Address{0x50}, common.Address{0xf3})
			if err != nil {
				f.Fatalf("pack %s: %v", m.Sig, err)
			}
			seed(data)
		}
	}
	for i, ok := range seeded {
		if !ok {
			f.Fatalf("no seed for %s", methods[i].Sig)
		}
	}
	f.Fuzz(func(t *testing.T, fn uint8, args []byte) {
		m := methods[int(fn)%len(methods)]
		data := append(slices.Clip(m.ID), args...)
		var env clob.Envelope
		r := Decode(data, testChainID, testSigner, &env)
		switch {
		case r >= clob.ReasonUnknownBook:
			t.Fatalf("%s: a non-decoder reason %q", m.Sig, r)
		case r != clob.OK && !isReset(&env):
			t.Fatalf("%s: refused with %q but left %+v", m.Sig, r, env)
		case m.IsConstant() && r != clob.ReasonUnknownFunction:
			t.Fatalf("view %s decoded as a transaction: %q", m.Sig, r)
		case r == clob.OK:
			if _, err := m.Inputs.Unpack(args); err != nil {
				t.Fatalf("%s: accepted arguments go-ethereum cannot unpack (%v): %x", m.Sig, err, args)
			}
		}
	})
}

// abiMethods lists the ABI's functions in signature order (the fuzzer's
// index into it must mean the same function on every run).
func abiMethods() []gethabi.Method {
	ms := make([]gethabi.Method, 0, len(orderbookABI.Methods))
	for _, m := range orderbookABI.Methods {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b gethabi.Method) int { return strings.Compare(a.Sig, b.Sig) })
	return ms
}
