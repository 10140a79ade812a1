package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ledgervenue/node/net/http1"
)

// delayHandler holds every answer, 4 MiB, back for a minute.
type delayHandler struct{}

const delayedBody = 4 << 20

func (delayHandler) Serve(_ *http1.Request, w *Response) {
	w.Delay(time.Minute)
	w.Body = append(w.Body, strings.Repeat("d", delayedBody)...)
}

// TestDelayedTotalMax: answers held back count against DelayedTotalMax
// over all connections; past it an answer is not held (it is written at
// once) and the held bytes never pass the bound. 20 connections ask for
// 4 MiB answers held a minute: 64 MiB holds 15 of them with their heads,
// the other 5 come at once.
func TestDelayedTotalMax(t *testing.T) {
	s := startServer(t, delayHandler{}, Config{})
	const conns, held = 20, DelayedTotalMax / (delayedBody + 1024)
	done := make(chan error, conns)
	for range conns {
		c := dial(t, s)
		_ = c.conn.SetDeadline(time.Time{}) // the held answers are not read: the cleanup's close ends them
		c.send(get("/"))
		go func() {
			resp, err := http.ReadResponse(c.br, nil)
			if err != nil {
				done <- err
				return
			}
			n, err := io.Copy(io.Discard, resp.Body)
			if err == nil && (n != delayedBody || resp.StatusCode != 200) {
				err = fmt.Errorf("answer %d, %d bytes", resp.StatusCode, n)
			}
			done <- err
		}()
	}
	for range conns - held {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("fewer than %d answers came without their delay", conns-held)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("a %d-th answer came, not held (%v)", conns-held+1, err)
	case <-time.After(200 * time.Millisecond):
	}
	if n := s.DelayedBytes(); n <= held*delayedBody || n > DelayedTotalMax {
		t.Fatalf("%d bytes held, want %d answers' worth, at most %d", n, held, DelayedTotalMax)
	}
}
