package server

import (
	"io"
	"net/http"
	"testing"

	"github.com/gorilla/websocket"
)

// TestSameOriginPage: a page the node served itself (the web view, /ui/)
// may use it over HTTP and WebSocket even when both origin lists admit
// nothing and the node is reached by a LAN address: its Origin is
// "http://" + Host. A rebinding page's Host is a name --http.vhosts does not
// serve, so the rule does not admit it.
func TestSameOriginPage(t *testing.T) {
	s := startServer(t, newWSHandler(), Config{CORSDomains: []string{}, WSOrigins: []string{}})
	for _, ch := range []struct {
		host, origin string
		status       int
	}{
		{"10.1.2.3:8545", "http://10.1.2.3:8545", 200},
		{"LocalHost:8545", "http://localhost:8545", 200},
		{"[::1]:8545", "http://[::1]:8545", 200},
		{"10.1.2.3", "http://10.1.2.3", 200},
		{"10.1.2.3:8545", "http://10.1.2.3:8546", 403},  // another port is another page
		{"10.1.2.3:8545", "https://10.1.2.3:8545", 403}, // the node serves no https page
		{"10.1.2.3:8545", "http://10.1.2.3", 403},
		{"evil.example:8545", "http://evil.example:8545", 403}, // Host refused first
	} {
		c := dial(t, s)
		c.send("POST /p HTTP/1.1\r\nContent-Length: 0\r\nHost: " + ch.host + "\r\nOrigin: " + ch.origin + "\r\n\r\n")
		resp, body := c.read("POST")
		grant := resp.Header.Get("Access-Control-Allow-Origin")
		if resp.StatusCode != ch.status || (ch.status == 200) != (grant == ch.origin) {
			t.Fatalf("Host %s Origin %s: %d %q grant %q, want %d", ch.host, ch.origin, resp.StatusCode, body, grant, ch.status)
		}
	}
	if status, body := upgradeWith(t, s, "http://10.1.2.3:8545", "10.1.2.3:8545"); status != 101 {
		t.Fatalf("the node's own page, upgrade: %d %s", status, body)
	}
	// Upgrades check no Host otherwise, so here the vhosts list is what
	// keeps a rebinding page out.
	if status, body := upgradeWith(t, s, "http://evil.example:8545", "evil.example:8545"); status != 403 || body != `{"error":"origin not allowed (--ws.origins)"}` {
		t.Fatalf("a rebinding page, upgrade: %d %s", status, body)
	}
}

// upgradeWith opens a WebSocket to s with the Origin and Host given ("":
// none, or the dialer's) and returns the status and, when refused, the
// body.
func upgradeWith(t *testing.T, s *Server, origin, host string) (int, string) {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	if host != "" {
		h.Set("Host", host)
	}
	conn, resp, err := websocket.DefaultDialer.Dial(wsURL(s), h)
	if err == nil {
		conn.Close()
		return resp.StatusCode, ""
	}
	if resp == nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
