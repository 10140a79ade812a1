package rpc

import (
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/valyala/fastjson"
)

// BotsController runs the venue's built-in bots (bench/bots, a client of
// this node's public API): Config.Bots. Its methods never wait for the
// network, since the admin_ bot methods call them on an event loop.
type BotsController interface {
	// Start parses spec and starts a session in the background; it refuses
	// a bad spec or a second session.
	Start(spec string) error
	// Stop asks the session to stop and reports whether one was running.
	Stop() bool
	// AppendStatus appends the session's state and per-bot counters (JSON).
	AppendStatus(dst []byte) []byte
}

var (
	errNoBots = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found",
		Data: []byte(`"bots run only on a node started with --dev on the wall clock"`)}
	errBotsSpec = jsonrpc.InvalidParams(`admin_startBots needs a spec string, e.g. "default" or "makers=2,takers=2,levels=5" (docs/bots.md)`)
)

// adminBots runs admin_startBots(spec) and admin_bots (both answer the
// status) and admin_stopBots (answers whether a session was running).
func (c *call) adminBots(dst []byte) ([]byte, *jsonrpc.Error) {
	b := c.s.cfg.Bots
	if b == nil {
		return dst, errNoBots
	}
	switch string(c.req.Method) {
	case "admin_startBots":
		v := c.req.Param(0)
		if v == nil || v.Type() != fastjson.TypeString {
			return dst, errBotsSpec
		}
		if err := b.Start(string(v.GetStringBytes())); err != nil {
			return dst, jsonrpc.InvalidParams(err.Error())
		}
	case "admin_stopBots":
		if b.Stop() {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	}
	return b.AppendStatus(dst), nil
}
