// Package proc runs the real ledgerd binary for whole-process tests: it
// builds a main package once, starts the node on a free loopback port, reads
// the address it listens on from its banner, and stops it gracefully, kills
// it (SIGKILL) like a crash, or waits for it to end by itself (a fault hook
// set in its environment). Tests only: every node it starts listens on
// 127.0.0.1.
package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Build builds the main package pkg (a path relative to the module root
// root, like "./cmd/ledgerd") cgo-free into dir and returns the binary.
func Build(root, pkg, dir string) (string, error) {
	out := filepath.Join(dir, strings.Trim(strings.ReplaceAll(pkg, "/", "_"), "._"))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
	}
	return out, nil
}

// Main is the TestMain of a package that tests the real binary: it builds
// ./cmd/ledgerd of the module at root once, or takes the binary LEDGERD_BIN
// names (to measure another build with the same tests), stores its path in
// *bin, runs the tests and removes the build. It returns the exit code.
func Main(m *testing.M, root string, bin *string) int {
	dir, err := os.MkdirTemp("", "ledgerd-test-")
	if *bin = os.Getenv("LEDGERD_BIN"); *bin == "" && err == nil {
		*bin, err = Build(root, "./cmd/ledgerd", dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	return m.Run()
}

// Ledgerd is a running node.
type Ledgerd struct {
	HTTP, WS string // http://127.0.0.1:PORT, ws://127.0.0.1:PORT
	cmd      *exec.Cmd
	log      lockedBuffer
	exited   chan struct{}
}

// StartTimeout bounds how long Start waits for the banner's listening line.
const StartTimeout = 60 * time.Second

var listeningRE = regexp.MustCompile(`ledgerd listening on (http://\S+) and (ws://\S+)`)

// Start runs bin with args plus --addr 127.0.0.1:0 and returns once it
// listens. Its stderr (the log) is kept for Log.
func Start(bin string, args ...string) (*Ledgerd, error) { return StartEnv(bin, nil, args...) }

// StartEnv is Start with env ("KEY=value" entries, e.g. a fault hook's)
// added to the test's own environment.
func StartEnv(bin string, env []string, args ...string) (*Ledgerd, error) {
	l := &Ledgerd{cmd: exec.Command(bin, append(args, "--addr", "127.0.0.1:0")...), exited: make(chan struct{})}
	if env != nil {
		l.cmd.Env = append(os.Environ(), env...)
	}
	l.cmd.Stderr = &l.log
	stdout, err := l.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := l.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { l.cmd.Wait(); close(l.exited) }()
	found := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- [2]string{m[1], m[2]}
				break
			}
		}
		io.Copy(io.Discard, stdout) // the rest of the banner
	}()
	select {
	case addr := <-found:
		l.HTTP, l.WS = addr[0], addr[1]
		return l, nil
	case <-l.exited:
		return nil, fmt.Errorf("ledgerd exited before it listened; its log:\n%s", l.Log())
	case <-time.After(StartTimeout):
		l.Kill()
		return nil, fmt.Errorf("ledgerd printed no listening line in %v; its log:\n%s", StartTimeout, l.Log())
	}
}

// Stop ends the node gracefully: SIGTERM, then SIGKILL if it still runs 10 s
// later. Calling it again, or after Kill, does nothing.
func (l *Ledgerd) Stop() {
	l.cmd.Process.Signal(syscall.SIGTERM)
	if l.Wait(10*time.Second) == nil {
		l.Kill()
	}
}

// Kill ends the node at once with SIGKILL, as a crash would, and waits for
// it to be gone.
func (l *Ledgerd) Kill() {
	l.cmd.Process.Kill()
	<-l.exited
}

// Wait waits up to d for the node to exit by itself (a fault hook's kill,
// a fatal error) and returns how it ended, or nil if it still runs; it
// leaves a running node running.
func (l *Ledgerd) Wait(d time.Duration) *os.ProcessState {
	select {
	case <-l.exited:
		return l.cmd.ProcessState
	case <-time.After(d):
		return nil
	}
}

// PID returns the node's process id, e.g. to read /proc/PID/status.
func (l *Ledgerd) PID() int { return l.cmd.Process.Pid }

// Log returns what the node wrote to stderr so far.
func (l *Ledgerd) Log() string { return l.log.String() }

// lockedBuffer is a bytes.Buffer safe for a writing process and a reading
// test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
