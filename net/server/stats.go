package server

// OpenConns returns the open connections, HTTP and WebSocket (bounded by
// Config.MaxConns), for the metrics.
func (s *Server) OpenConns() int64 { return s.open.Load() }

// OutboundBytes returns the bytes queued for sockets over all connections
// (bounded by Config.OutboundTotalMax), for the metrics.
func (s *Server) OutboundBytes() int64 { return s.outbound.Load() }
