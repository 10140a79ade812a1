package clients

import (
	"bufio"
	"bytes"
	"context"
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

// repoRoot is the module root, seen from this package's directory (the
// working directory of its tests).
const repoRoot = "../.."

// binDir holds the binaries the tests build, once per test binary.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ledgerd-clients-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// built remembers each package's build, so a binary is built once however
// many tests ask for it.
var built sync.Map // package path -> func() (string, error)

// buildGo builds the main package pkg (a path relative to the module root,
// like "./cmd/ledgerd") cgo-free into binDir and returns the binary's path.
func buildGo(t *testing.T, pkg string) string {
	t.Helper()
	once, _ := built.LoadOrStore(pkg, sync.OnceValues(func() (string, error) {
		out := filepath.Join(binDir, strings.Trim(strings.ReplaceAll(pkg, "/", "_"), "._"))
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
		}
		return out, nil
	}))
	bin, err := once.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// node is a running ledgerd.
type node struct {
	HTTP, WS string // http://127.0.0.1:PORT, ws://127.0.0.1:PORT
}

var listeningRE = regexp.MustCompile(`ledgerd listening on (http://\S+) and (ws://\S+)`)

// startNode starts a fresh dev node (its own data directory, a free port),
// with --compat when compat is set, and stops it when the test ends. The
// node's log is written to the test log if the test fails.
func startNode(t *testing.T, compat bool) node {
	t.Helper()
	args := []string{"--dev", "--datadir", t.TempDir(), "--addr", "127.0.0.1:0", "--admin-token", "test"}
	if compat {
		args = append(args, "--compat")
	}
	cmd := exec.Command(buildGo(t, "./cmd/ledgerd"), args...)
	var logs lockedBuffer
	cmd.Stderr = &logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopProcess(cmd)
		if t.Failed() {
			t.Logf("ledgerd %s log:\n%s", strings.Join(args, " "), logs.String())
		}
	})

	found := make(chan node, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- node{HTTP: m[1], WS: m[2]}
				break
			}
		}
		io.Copy(io.Discard, stdout) // the rest of the banner
	}()
	select {
	case n := <-found:
		return n
	case <-time.After(30 * time.Second):
		t.Fatalf("ledgerd printed no listening line in 30 s; its log:\n%s", logs.String())
		return node{}
	}
}

// stopProcess ends a process the test started: SIGTERM, then SIGKILL if it
// is still running 10 s later.
func stopProcess(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// program is one run of a client program: its output and how it ended.
type program struct {
	Stdout, Stderr string
	Err            error // nil when it exited 0
}

// run runs a client program (argv[0] is looked up on PATH unless it is a
// path) in this package's directory with env added to the environment, and
// kills it when timeout runs out.
func run(timeout time.Duration, env []string, argv ...string) program {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %v: %w", timeout, err)
	}
	return program{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// logOutput writes every line the program printed to the test log.
func (p program) logOutput(t *testing.T, name string) {
	t.Helper()
	if p.Err != nil {
		t.Logf("%s: %v", name, p.Err)
	}
	for _, l := range strings.Split(strings.TrimRight(p.Stdout, "\n"), "\n") {
		t.Logf("%s stdout: %s", name, l)
	}
	for _, l := range strings.Split(strings.TrimRight(p.Stderr, "\n"), "\n") {
		t.Logf("%s stderr: %s", name, l)
	}
}

// jsReady reports whether the JavaScript clients can run: true when node
// and bench/clients/js/node_modules are there, false (logged) when
// LEDGERD_SKIP_JS=1 says to leave them out; otherwise the test fails.
func jsReady(t *testing.T) bool {
	t.Helper()
	if os.Getenv("LEDGERD_SKIP_JS") == "1" {
		t.Log("LEDGERD_SKIP_JS=1: the ethers and viem clients are skipped")
		return false
	}
	const skip = "LEDGERD_SKIP_JS=1 skips the JavaScript clients"
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH: install Node.js 20 or later and npm (.ci/run does), then make test installs ethers and viem; %s", skip)
	}
	if _, err := os.Stat("js/node_modules"); err != nil {
		t.Fatalf("bench/clients/js/node_modules is missing: make test installs it (npm ci --prefix bench/clients/js); %s", skip)
	}
	return true
}

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
