package ws

import (
	"crypto/sha1"
	"encoding/base64"

	"github.com/ledgervenue/node/net/http1"
)

// acceptGUID is appended to Sec-WebSocket-Key before hashing (RFC 6455 §1.3).
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// keyDecodedBytes is the length of a decoded Sec-WebSocket-Key (§4.1); its
// base64 form is keyBytes long.
const (
	keyDecodedBytes = 16
	keyBytes        = 24
)

// AppendAcceptKey appends the Sec-WebSocket-Accept value for key:
// base64(sha1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")).
func AppendAcceptKey(dst, key []byte) []byte {
	var sum [sha1.Size]byte
	var buf [64]byte // a valid key (24 bytes) plus the GUID fits: no allocation
	if len(key)+len(acceptGUID) <= len(buf) {
		n := copy(buf[:], key)
		n += copy(buf[n:], acceptGUID)
		sum = sha1.Sum(buf[:n])
	} else {
		h := sha1.New()
		h.Write(key)
		h.Write([]byte(acceptGUID))
		h.Sum(sum[:0])
	}
	return base64.StdEncoding.AppendEncode(dst, sum[:])
}

// UpgradeRequest holds the request method and the values of the fields of an
// upgrade request that CheckUpgrade looks at, as http1.Request.Method and
// Request.Header return them: nil when the field is missing. Header returns
// the first field of a name only; a client that splits Connection over two
// lines with "upgrade" in the second is refused.
type UpgradeRequest struct {
	Method     []byte
	Upgrade    []byte // Upgrade
	Connection []byte // Connection
	Version    []byte // Sec-WebSocket-Version
	Key        []byte // Sec-WebSocket-Key
}

// CheckUpgrade validates a WebSocket opening handshake (RFC 6455 §4.2.1):
// method GET, an Upgrade token list containing "websocket" and a Connection
// token list containing "upgrade" (both ASCII case-insensitive),
// Sec-WebSocket-Version 13 and a Sec-WebSocket-Key that is the base64 of 16
// bytes. It returns nil, or the error to answer with (see HandshakeError).
// Checks run in that order. It does not allocate.
func CheckUpgrade(req *UpgradeRequest) *HandshakeError {
	switch {
	case string(req.Method) != "GET":
		return ErrNotGet
	case !http1.HasToken(req.Upgrade, "websocket"):
		return ErrNoUpgradeToken
	case !http1.HasToken(req.Connection, "upgrade"):
		return ErrNoConnectionTok
	case req.Version == nil:
		return ErrNoVersion
	case string(http1.TrimOWS(req.Version)) != "13":
		return ErrBadVersion
	case !validKey(http1.TrimOWS(req.Key)):
		return ErrBadKey
	}
	return nil
}

// AppendUpgradeResponse appends the complete 101 Switching Protocols response
// accepting the handshake of key (the request's Sec-WebSocket-Key, already
// checked by CheckUpgrade). With deflate != nil it accepts permessage-deflate
// with the parameters ParseDeflateOffer chose, always including
// server_no_context_takeover. No subprotocol is negotiated.
func AppendUpgradeResponse(dst, key []byte, deflate *DeflateParams) []byte {
	dst = append(dst, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	dst = AppendAcceptKey(dst, http1.TrimOWS(key))
	dst = append(dst, "\r\n"...)
	if deflate != nil {
		dst = append(dst, "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover"...)
		if deflate.ClientNoContextTakeover {
			dst = append(dst, "; client_no_context_takeover"...)
		}
		if deflate.ServerMaxWindowBits != 0 {
			dst = append(dst, "; server_max_window_bits=15"...)
		}
		dst = append(dst, "\r\n"...)
	}
	return append(dst, "\r\n"...)
}

// validKey reports whether key is the base64 encoding of 16 bytes, as
// Sec-WebSocket-Key must be (RFC 6455 §4.1).
func validKey(key []byte) bool {
	if len(key) != base64.StdEncoding.EncodedLen(keyDecodedBytes) {
		return false
	}
	var buf [keyDecodedBytes + 2]byte
	n, err := base64.StdEncoding.Decode(buf[:], key)
	return err == nil && n == keyDecodedBytes
}
