package rpc

import (
	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/server"
)

// serveREST answers non-POST requests. The REST surface (bridge endpoints)
// is not built yet: every path is 404 with a JSON body.
func (s *Service) serveREST(req *http1.Request, w *server.Response) {
	w.Status = 404
	w.Body = append(w.Body, `{"error":"not found"}`...)
}
