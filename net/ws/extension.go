package ws

import "github.com/ledgervenue/node/net/http1"

// DeflateParams is an accepted permessage-deflate offer (RFC 7692). The
// server side is fixed: server_no_context_takeover is always answered, so
// every server message is compressed on its own (Deflater), and the server
// compresses with a 32 KiB window.
type DeflateParams struct {
	// ClientNoContextTakeover is set when the client offered
	// client_no_context_takeover: it compresses each message on its own and
	// the Reader keeps no window between messages. Echoed in the response.
	// When clear, the Reader keeps the last 32 KiB of inflated messages.
	ClientNoContextTakeover bool
	// ServerMaxWindowBits is 15 when the client offered
	// server_max_window_bits=15 (echoed in the response), else 0.
	ServerMaxWindowBits uint8
}

// maxWindowBits is the only window the server compresses with (32 KiB).
const maxWindowBits = 15

// ParseDeflateOffer reads a Sec-WebSocket-Extensions value, a comma-separated
// list of offers, and returns the first permessage-deflate offer the server
// can honour:
//
//	offer = "permessage-deflate" *( OWS ";" OWS param )
//	param = name [ OWS "=" OWS ( token / quoted-string ) ]
//
// Parameters: server_no_context_takeover and client_no_context_takeover
// (no value), server_max_window_bits (value 8..15 required) and
// client_max_window_bits (value 8..15 optional). An offer with an unknown or
// repeated parameter, a missing or malformed value, or a
// server_max_window_bits below 15 (the compressor's window is fixed at 32
// KiB) is declined and the next one is tried. client_max_window_bits is
// accepted with any value and not echoed: the inflater handles any window.
// A value that breaks the list syntax declines everything (ok false). It does
// not allocate.
func ParseDeflateOffer(extHeader []byte) (p DeflateParams, ok bool) {
	s := extParser{b: extHeader}
	for {
		s.skipOWS()
		if s.done() {
			return DeflateParams{}, false
		}
		name, good := s.token()
		if !good {
			return DeflateParams{}, false
		}
		p, accept, good := s.offer(http1.EqualFold(name, "permessage-deflate"))
		if !good {
			return DeflateParams{}, false
		}
		if accept {
			return p, true
		}
		if s.done() {
			return DeflateParams{}, false
		}
		s.i++ // the comma ending the offer
	}
}

// extParser scans an extension list.
type extParser struct {
	b []byte
	i int
}

func (s *extParser) done() bool { return s.i >= len(s.b) }

func (s *extParser) skipOWS() {
	for s.i < len(s.b) && http1.IsOWS(s.b[s.i]) {
		s.i++
	}
}

// peek returns the next byte after OWS, 0 at the end.
func (s *extParser) peek() byte {
	s.skipOWS()
	if s.done() {
		return 0
	}
	return s.b[s.i]
}

// offer scans the parameters of one offer up to the comma that ends it (not
// consumed) or the end. deflate says whether the offer is permessage-deflate;
// accept whether it can be honoured; good is false on a syntax error.
func (s *extParser) offer(deflate bool) (p DeflateParams, accept, good bool) {
	accept = deflate
	var seen [4]bool
	for {
		switch s.peek() {
		case 0, ',':
			return p, accept, true
		case ';':
			s.i++
		default:
			return p, false, false
		}
		s.skipOWS()
		name, good := s.token()
		if !good {
			return p, false, false
		}
		var value []byte
		hasValue := s.peek() == '='
		if hasValue {
			s.i++
			s.skipOWS()
			if value, good = s.value(); !good {
				return p, false, false
			}
		}
		if accept {
			accept = p.set(&seen, name, value, hasValue)
		}
	}
}

// set applies one parameter and reports whether the offer is still
// acceptable.
func (p *DeflateParams) set(seen *[4]bool, name, value []byte, hasValue bool) bool {
	var i int
	switch {
	case http1.EqualFold(name, "server_no_context_takeover"):
		i = 0
	case http1.EqualFold(name, "client_no_context_takeover"):
		i = 1
		p.ClientNoContextTakeover = true
	case http1.EqualFold(name, "server_max_window_bits"):
		i = 2
		bits, ok := windowBits(value)
		if !hasValue || !ok || bits != maxWindowBits {
			return false
		}
		p.ServerMaxWindowBits = maxWindowBits
	case http1.EqualFold(name, "client_max_window_bits"):
		i = 3
		if _, ok := windowBits(value); hasValue && !ok {
			return false
		}
	default:
		return false
	}
	if seen[i] || (i < 2 && hasValue) {
		return false
	}
	seen[i] = true
	return true
}

// windowBits parses a window size: "8".."15", no leading zero (RFC 7692 §7.1.2).
func windowBits(v []byte) (int, bool) {
	switch {
	case len(v) == 1 && v[0] >= '8' && v[0] <= '9':
		return int(v[0] - '0'), true
	case len(v) == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5':
		return 10 + int(v[1]-'0'), true
	}
	return 0, false
}

// token scans a token (RFC 9110 tchar).
func (s *extParser) token() ([]byte, bool) {
	start := s.i
	for s.i < len(s.b) && isTchar(s.b[s.i]) {
		s.i++
	}
	return s.b[start:s.i], s.i > start
}

// value scans a token or a quoted-string and returns its content. A
// quoted-string with a quoted-pair is returned with the backslashes, which
// makes it fail windowBits, as it should.
func (s *extParser) value() ([]byte, bool) {
	if s.done() || s.b[s.i] != '"' {
		return s.token()
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\':
			s.i += 2
		case c < ' ' && c != '\t', c == 0x7f:
			return nil, false
		default:
			s.i++
		}
	}
	return nil, false
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
