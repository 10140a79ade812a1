package load

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echoServer is a tiny HTTP/1.1 server: it answers each request with its own
// body, in order. With batch > 1 it answers only once batch requests of a
// connection are in, which a client without pipelining never completes; with
// silent it reads but never answers.
type echoServer struct {
	ln       net.Listener
	batch    int
	silent   bool
	requests atomic.Int64
	// The stallAt-th request (from 1) of the server waits stallFor (ns)
	// before it is answered; zero never stalls.
	stallAt, stallFor atomic.Int64
	wg                sync.WaitGroup
}

func startEchoServer(t testing.TB, batch int, silent bool) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln, batch: batch, silent: silent}
	s.wg.Go(s.accept)
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

func (s *echoServer) accept() {
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		conns = append(conns, c)
		s.wg.Go(func() { s.serve(c) })
	}
}

func (s *echoServer) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	var out []byte
	queued := 0
	for {
		body, err := readRequest(r)
		if err != nil {
			return
		}
		n := s.requests.Add(1)
		if n == s.stallAt.Load() {
			time.Sleep(time.Duration(s.stallFor.Load()))
		}
		if s.silent {
			continue
		}
		out = append(out, "HTTP/1.1 200 OK\r\nContent-Length: "...)
		out = strconv.AppendInt(out, int64(len(body)), 10)
		out = append(append(out, "\r\n\r\n"...), body...)
		if queued++; queued < s.batch {
			continue
		}
		if _, err := c.Write(out); err != nil {
			return
		}
		out, queued = out[:0], 0
	}
}

// readRequest reads one request with a Content-Length body.
func readRequest(r *bufio.Reader) ([]byte, error) {
	length := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "content-length") {
			if length, err = strconv.Atoi(strings.TrimSpace(value)); err != nil {
				return nil, err
			}
		}
	}
	body := make([]byte, length)
	_, err := io.ReadFull(r, body)
	return body, err
}
