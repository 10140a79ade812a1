package rpc

import "github.com/ledgervenue/node/codec/jsonrpc"

// ScenarioPlayer is the player of ledgerd --scenario (bench/scenario):
// Config.Scenario. lab_scenario answers its status; AppendStatus never
// waits for the network, since an event loop calls it.
type ScenarioPlayer interface {
	// AppendStatus appends {name, state, t_s, duration_s, step, …, hash?}
	// (JSON).
	AppendStatus(dst []byte) []byte
}

var errNoScenario = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found",
	Data: []byte(`"no scenario: start the node with ledgerd --dev --scenario FILE (docs/lab.md)"`)}

// labScenario answers lab_scenario [].
func (c *call) labScenario(dst []byte) ([]byte, *jsonrpc.Error) {
	if c.s.cfg.Scenario == nil {
		return dst, errNoScenario
	}
	return c.s.cfg.Scenario.AppendStatus(dst), nil
}
