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

// delayHandler holds every answer, 4 MiB, back for a second.
type delayHandler struct{}

const delayedBody = 4 << 20

func (delayHandler) Serve(_ *http1.Request, w *Response) {
	w.Delay(time.Second)
	w.Body = append(w.Body, strings.Repeat("d", delayedBody)...)
}

// TestDelayedTotalMax: answers held back count against DelayedTotalMax
// over all connections; past it an answer is not held (it is written at
// once) and the held bytes never pass the bound. 20 connections of 4 MiB
// answers: 80 MiB asked, 64 MiB at most held.
func TestDelayedTotalMax(t *testing.T) {
	s := startServer(t, delayHandler{}, Config{})
	const conns = 20
	cs := make([]*client, conns)
	for i := range cs {
		cs[i] = dial(t, s)
		cs[i].send(get("/"))
	}
	waitFor(t, "held answers", func() bool { return s.DelayedBytes() > DelayedTotalMax-delayedBody-1024 })
	if held := s.DelayedBytes(); held > DelayedTotalMax {
		t.Fatalf("%d bytes held, over %d", held, DelayedTotalMax)
	}
	type got struct {
		at  time.Duration
		err string
	}
	start := time.Now()
	done := make(chan got, conns)
	for _, c := range cs {
		go func() {
			resp, err := http.ReadResponse(c.br, nil)
			if err != nil {
				done <- got{err: err.Error()}
				return
			}
			n, err := io.Copy(io.Discard, resp.Body)
			if err != nil || n != delayedBody || resp.StatusCode != 200 {
				done <- got{err: fmt.Sprintf("answer %d, %d bytes (%v)", resp.StatusCode, n, err)}
				return
			}
			done <- got{at: time.Since(start)}
		}()
	}
	quick := 0
	for range conns {
		g := <-done
		if g.err != "" {
			t.Fatal(g.err)
		}
		if g.at < 500*time.Millisecond {
			quick++
		}
	}
	// 64 MiB holds fifteen 4 MiB answers with their heads: at least five
	// are written at once.
	if quick < conns-DelayedTotalMax/delayedBody || quick == conns {
		t.Fatalf("%d of %d answers not held back, want %d..%d", quick, conns, conns-DelayedTotalMax/delayedBody, conns-1)
	}
	waitFor(t, "held bytes released", func() bool { return s.DelayedBytes() == 0 })
}
