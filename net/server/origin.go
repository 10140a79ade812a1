package server

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ledgervenue/node/net/http1"
)

// Browser policy: which web pages may use the node (Origin) and under which
// host names (Host), as go-ethereum's --http.corsdomain, --ws.origins and
// --http.vhosts. See "Origin and Host" in doc.go.

// DefaultOrigins is Config.CORSDomains and Config.WSOrigins when nil: pages
// served from this machine, any scheme and port.
var DefaultOrigins = []string{"localhost", "127.0.0.1", "[::1]"}

// DefaultVHosts is Config.VHosts when nil. IP literals are always served.
var DefaultVHosts = []string{"localhost"}

// Refusals, all 403.
const (
	reasonCORS    = "origin not allowed (--http.corsdomain)"
	reasonWSOrig  = "origin not allowed (--ws.origins)"
	reasonBadHost = "invalid host specified" // go-ethereum's words
)

// originRule is one entry of an origin list, lower case. As in go-ethereum's
// --ws.origins, an entry may omit the scheme and the port, which then match
// any: "localhost" admits http://localhost:3000 and https://localhost.
type originRule struct {
	any                bool // "*"
	scheme, host, port string
}

// originList is a parsed origin list; empty admits no Origin at all.
type originList []originRule

func parseOrigins(flagName string, list []string) (originList, error) {
	out := make(originList, 0, len(list))
	for _, entry := range list {
		e := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(entry)), "/") // "http://host/" as copied from a browser
		if e == "*" {
			out = append(out, originRule{any: true})
			continue
		}
		var r originRule
		rest := e
		if i := strings.Index(e, "://"); i >= 0 {
			r.scheme, rest = e[:i], e[i+3:]
		}
		host, port, ok := splitHostPort([]byte(rest))
		if !ok || r.scheme == "" && strings.Contains(e, "://") {
			return nil, fmt.Errorf("%s: %q is not an origin (scheme://host:port, host, or *)", flagName, entry)
		}
		r.host, r.port = string(host), string(port)
		out = append(out, r)
	}
	return out, nil
}

// allows reports whether origin (an Origin header value) is listed.
func (l originList) allows(origin []byte) bool {
	i := bytes.Index(origin, schemeSep)
	if i <= 0 {
		return false // "null" (file:, sandboxed pages) or garbage
	}
	scheme := origin[:i]
	host, port, ok := splitHostPort(origin[i+len(schemeSep):])
	if !ok {
		return false
	}
	for _, r := range l {
		if r.any || (r.scheme == "" || http1.EqualFold(scheme, r.scheme)) &&
			http1.EqualFold(host, r.host) && (r.port == "" || string(port) == r.port) {
			return true
		}
	}
	return false
}

var schemeSep = []byte("://")

// hostList is a parsed --http.vhosts.
type hostList struct {
	any   bool
	names []string // lower case
}

func parseVHosts(list []string) hostList {
	var l hostList
	for _, e := range list {
		e = strings.ToLower(strings.TrimSpace(e))
		l.any = l.any || e == "*"
		l.names = append(l.names, e)
	}
	return l
}

// allows reports whether a Host header value is served: missing or empty
// (no browser omits it), an IP literal, or a listed name; the port is
// ignored.
func (l hostList) allows(hostHeader []byte) bool {
	if len(hostHeader) == 0 || l.any {
		return true
	}
	host, _, ok := splitHostPort(hostHeader)
	if !ok {
		return false
	}
	if isIPLiteral(host) {
		return true
	}
	for _, n := range l.names {
		if http1.EqualFold(host, n) {
			return true
		}
	}
	return false
}

// policy is the server's parsed browser policy.
type policy struct {
	cors, wsOrigins originList
	vhosts          hostList
}

func newPolicy(cfg *Config) (policy, error) {
	var p policy
	var err error
	if p.cors, err = parseOrigins("--http.corsdomain", cfg.CORSDomains); err != nil {
		return p, err
	}
	if p.wsOrigins, err = parseOrigins("--ws.origins", cfg.WSOrigins); err != nil {
		return p, err
	}
	p.vhosts = parseVHosts(cfg.VHosts)
	return p, nil
}

// check applies the policy to one request: the reason to refuse it with
// (403), or "" and the origin to grant in Access-Control-Allow-Origin (nil
// when the request has no Origin). An upgrade is checked against
// --ws.origins only, as in go-ethereum: Host is not checked, since a page
// that reaches the node through a rebound name still sends its own Origin.
func (p *policy) check(req *http1.Request, upgrade bool) (reason string, origin []byte) {
	origin = req.Header("Origin")
	host := req.Header("Host")
	if upgrade {
		if origin != nil && !p.wsOrigins.allows(origin) && !p.sameOrigin(origin, host) {
			return reasonWSOrig, nil
		}
		return "", origin
	}
	if !p.vhosts.allows(host) {
		return reasonBadHost, nil
	}
	if origin != nil && !p.cors.allows(origin) && !p.sameOrigin(origin, host) {
		return reasonCORS, nil
	}
	return "", origin
}

// sameOrigin reports whether origin is a page the node served itself (its
// web view, /ui/): "http://" and exactly the request's Host, a Host the
// vhosts list serves. So the node's own page works whatever the lists say
// and under any address the node listens on (--addr 0.0.0.0 reached by its
// LAN IP), while a DNS-rebinding page, whose Host is its own name, is still
// refused: only a name in --http.vhosts or an IP literal counts.
func (p *policy) sameOrigin(origin, host []byte) bool {
	rest, ok := bytes.CutPrefix(origin, []byte("http://"))
	return ok && len(host) > 0 && bytes.EqualFold(rest, host) && p.vhosts.allows(host)
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port". The host
// keeps its brackets; ok is false for an empty host or a port that is not
// digits (a path, say: no browser sends one).
func splitHostPort(b []byte) (host, port []byte, ok bool) {
	host = b
	if len(b) > 0 && b[0] == '[' {
		end := bytes.IndexByte(b, ']')
		if end < 0 {
			return nil, nil, false
		}
		host, b = b[:end+1], b[end+1:]
		if len(b) > 0 && b[0] != ':' {
			return nil, nil, false
		}
	} else if i := bytes.IndexByte(b, ':'); i >= 0 {
		host, b = b[:i], b[i:]
	} else {
		b = nil
	}
	if len(b) > 0 {
		port = b[1:]
		for _, c := range port {
			if !isDigit(c) {
				return nil, nil, false
			}
		}
	}
	return host, port, len(host) > 0
}

// isIPLiteral reports whether host is a dotted-quad IPv4 address or a
// bracketed IPv6 address (no zone), without allocating: a name a DNS
// rebinding attack could point elsewhere is neither.
func isIPLiteral(host []byte) bool {
	if n := len(host); n > 2 && host[0] == '[' && host[n-1] == ']' {
		return isIPv6(host[1 : n-1])
	}
	return isIPv4(host)
}

// isIPv4 accepts what netip.ParseAddr accepts for IPv4: four decimal parts
// of at most 255 without leading zeros.
func isIPv4(s []byte) bool {
	for part := range 4 {
		if part > 0 {
			if len(s) == 0 || s[0] != '.' {
				return false
			}
			s = s[1:]
		}
		n, v := 0, 0
		for n < len(s) && n < 3 && isDigit(s[n]) {
			v = v*10 + int(s[n]-'0')
			n++
		}
		if n == 0 || v > 255 || n > 1 && s[0] == '0' {
			return false
		}
		s = s[n:]
	}
	return len(s) == 0
}

// isIPv6 accepts what netip.ParseAddr accepts for IPv6 without a zone: eight
// groups of up to four hex digits, or fewer with one "::", the last two
// possibly written as IPv4.
func isIPv6(s []byte) bool {
	groups, ellipsis := 0, false
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		ellipsis, s = true, s[2:]
	}
	for len(s) > 0 {
		n := 0
		for n < len(s) && n < 5 && isHex(s[n]) {
			n++
		}
		if n < len(s) && s[n] == '.' {
			if groups > 6 || !isIPv4(s) {
				return false
			}
			groups += 2
			break
		}
		if n == 0 || n > 4 {
			return false
		}
		groups++
		s = s[n:]
		if len(s) == 0 {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return false // a stray character, or a trailing single colon
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis {
				return false
			}
			ellipsis, s = true, s[1:]
		}
	}
	if ellipsis {
		return groups < 8
	}
	return groups == 8
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
