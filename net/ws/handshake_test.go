package ws

import (
	"testing"
)

func TestAppendAcceptKey(t *testing.T) {
	f := func(key, want string) {
		t.Helper()
		if got := string(AppendAcceptKey([]byte("x"), []byte(key))); got != "x"+want {
			t.Fatalf("AppendAcceptKey(%q) = %q, want x%q", key, got, want)
		}
	}
	f("dGhlIHNhbXBsZSBub25jZQ==", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") // RFC 6455 §1.3
	f("x3JJHMbDL1EzLkh9GBhXDw==", "HSmrc0sMlYUkAGmm5OPpG2HaGWk=") // RFC 6455 §1.2 example
	// A key too long for the stack buffer takes the other path, same result
	// as hashing it directly.
	long := "0123456789012345678901234567890123456789"
	if got, want := AppendAcceptKey(nil, []byte(long)), acceptKeyRef(long); string(got) != want {
		t.Fatalf("long key: %q want %q", got, want)
	}
	if a := testing.AllocsPerRun(100, func() { AppendAcceptKey(make([]byte, 0, 64)[:0], []byte("dGhlIHNhbXBsZSBub25jZQ==")) }); a > 1 {
		t.Fatalf("%.1f allocs", a)
	}
}

func TestCheckUpgrade(t *testing.T) {
	good := UpgradeRequest{
		Method: []byte("GET"), Upgrade: []byte("websocket"), Connection: []byte("Upgrade"),
		Version: []byte("13"), Key: []byte("dGhlIHNhbXBsZSBub25jZQ=="),
	}
	f := func(mod func(r *UpgradeRequest), want *HandshakeError) {
		t.Helper()
		r := good
		mod(&r)
		if got := CheckUpgrade(&r); got != want {
			t.Fatalf("CheckUpgrade(%q) = %v, want %v", r, got, want)
		}
	}
	f(func(r *UpgradeRequest) {}, nil)
	f(func(r *UpgradeRequest) { r.Upgrade = []byte("WebSocket") }, nil)
	f(func(r *UpgradeRequest) { r.Upgrade = []byte("h2c, websocket") }, nil)
	f(func(r *UpgradeRequest) { r.Connection = []byte("keep-alive, Upgrade") }, nil)
	f(func(r *UpgradeRequest) { r.Connection = []byte("UPGRADE") }, nil)
	f(func(r *UpgradeRequest) { r.Version = []byte(" 13 ") }, nil)
	f(func(r *UpgradeRequest) { r.Method = []byte("POST") }, ErrNotGet)
	f(func(r *UpgradeRequest) { r.Method = []byte("get") }, ErrNotGet)
	f(func(r *UpgradeRequest) { r.Upgrade = nil }, ErrNoUpgradeToken)
	f(func(r *UpgradeRequest) { r.Upgrade = []byte("websocket2") }, ErrNoUpgradeToken)
	f(func(r *UpgradeRequest) { r.Connection = []byte("keep-alive") }, ErrNoConnectionTok)
	f(func(r *UpgradeRequest) { r.Connection = []byte("upgraded") }, ErrNoConnectionTok)
	f(func(r *UpgradeRequest) { r.Version = nil }, ErrNoVersion)
	f(func(r *UpgradeRequest) { r.Version = []byte("8") }, ErrBadVersion)
	f(func(r *UpgradeRequest) { r.Version = []byte("13, 8") }, ErrBadVersion)
	f(func(r *UpgradeRequest) { r.Key = nil }, ErrBadKey)
	f(func(r *UpgradeRequest) { r.Key = []byte("dGhlIHNhbXBsZSBub25jZQ") }, ErrBadKey)   // no padding
	f(func(r *UpgradeRequest) { r.Key = []byte("dGhlIHNhbXBsZSBub25jZSE=") }, ErrBadKey) // 17 bytes
	f(func(r *UpgradeRequest) { r.Key = []byte("dGhlIHNhbXBsZSBub25j!Q==") }, ErrBadKey) // not base64
	if ErrBadVersion.Status != 426 || ErrBadVersion.Header != "Sec-WebSocket-Version: 13\r\n" {
		t.Fatalf("426: %+v", ErrBadVersion)
	}
	for _, e := range []*HandshakeError{ErrNotGet, ErrNoUpgradeToken, ErrNoConnectionTok, ErrNoVersion, ErrBadKey} {
		if e.Status != 400 || e.Header != "" {
			t.Fatalf("%+v", e)
		}
	}
	r := good
	if a := testing.AllocsPerRun(100, func() { CheckUpgrade(&r) }); a != 0 {
		t.Fatalf("%.1f allocs", a)
	}
}

func TestParseDeflateOffer(t *testing.T) {
	f := func(header string, wantOK bool, want DeflateParams) {
		t.Helper()
		got, ok := ParseDeflateOffer([]byte(header))
		if ok != wantOK || got != want {
			t.Fatalf("ParseDeflateOffer(%q) = %+v %v, want %+v %v", header, got, ok, want, wantOK)
		}
	}
	yes := func(header string, want DeflateParams) { t.Helper(); f(header, true, want) }
	no := func(header string) { t.Helper(); f(header, false, DeflateParams{}) }
	yes("permessage-deflate", DeflateParams{})
	yes("Permessage-Deflate", DeflateParams{})
	yes("permessage-deflate; client_max_window_bits", DeflateParams{})                                                              // Chrome, Firefox
	yes("permessage-deflate; server_no_context_takeover; client_no_context_takeover", DeflateParams{ClientNoContextTakeover: true}) // gorilla
	yes("permessage-deflate;client_max_window_bits=10", DeflateParams{})
	yes(`permessage-deflate; client_max_window_bits="8"`, DeflateParams{})
	yes("permessage-deflate; server_max_window_bits=15", DeflateParams{ServerMaxWindowBits: 15})
	yes(`permessage-deflate ; server_max_window_bits = "15" ; client_no_context_takeover `, DeflateParams{ClientNoContextTakeover: true, ServerMaxWindowBits: 15})
	// The first acceptable offer wins; declined and unknown offers are skipped.
	yes("x-webkit-deflate-frame, permessage-deflate; client_no_context_takeover", DeflateParams{ClientNoContextTakeover: true})
	yes(`foo; bar="a, b; c", permessage-deflate`, DeflateParams{})
	yes("permessage-deflate; server_max_window_bits=10, permessage-deflate; client_no_context_takeover", DeflateParams{ClientNoContextTakeover: true})
	yes("permessage-deflate; unknown, permessage-deflate", DeflateParams{})
	// Declined offers.
	no("")
	no("x-webkit-deflate-frame")
	no("permessage-deflate; server_max_window_bits=10") // window below 15
	no("permessage-deflate; server_max_window_bits")    // value required
	no("permessage-deflate; server_max_window_bits=16")
	no("permessage-deflate; client_max_window_bits=7")
	no("permessage-deflate; client_max_window_bits=08")
	no(`permessage-deflate; client_max_window_bits="1\5"`)
	no("permessage-deflate; client_no_context_takeover=1")
	no("permessage-deflate; server_no_context_takeover; server_no_context_takeover")
	no("permessage-deflate; client_max_window_bits; client_max_window_bits=9")
	no("permessage-deflate; mux")
	// Broken syntax declines everything.
	no("permessage-deflate; ")
	no("permessage-deflate;; client_no_context_takeover")
	no("permessage-deflate client_no_context_takeover")
	no(`permessage-deflate; client_max_window_bits="10`)
	no(", , permessage-deflate=1")
	no("foo bar, permessage-deflate")
}

func TestAppendUpgradeResponse(t *testing.T) {
	f := func(deflate *DeflateParams, wantExt string) {
		t.Helper()
		want := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n" + wantExt + "\r\n"
		if got := string(AppendUpgradeResponse(nil, []byte("dGhlIHNhbXBsZSBub25jZQ=="), deflate)); got != want {
			t.Fatalf("got\n%q\nwant\n%q", got, want)
		}
	}
	f(nil, "")
	f(&DeflateParams{}, "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n")
	f(&DeflateParams{ClientNoContextTakeover: true, ServerMaxWindowBits: 15},
		"Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15\r\n")
}
