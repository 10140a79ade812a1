package clients

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgervenue/node/bench/proc"
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
	once, _ := built.LoadOrStore(pkg, sync.OnceValues(func() (string, error) { return proc.Build(repoRoot, pkg, binDir) }))
	bin, err := once.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startNode starts a fresh dev node (its own data directory, a free port),
// with --compat when compat is set and the flags extra, and stops it when
// the test ends. The node's log is written to the test log if the test
// fails.
func startNode(t *testing.T, compat bool, extra ...string) *proc.Ledgerd {
	t.Helper()
	args := []string{"--dev", "--datadir", t.TempDir(), "--admin-token", "test"}
	if compat {
		args = append(args, "--compat")
	}
	args = append(args, extra...)
	n, err := proc.Start(buildGo(t, "./cmd/ledgerd"), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Stop()
		if t.Failed() {
			t.Logf("ledgerd %s log:\n%s", strings.Join(args, " "), n.Log())
		}
	})
	return n
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
		// The CPU it used tells a busy loop (about the whole timeout) from a
		// program that waited or was not scheduled (about none).
		err = fmt.Errorf("killed after %v: %w (it had used %v user and %v system CPU)",
			timeout, err, cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime())
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

// TestRunKillsAndTellsCPU: a program that outlives its time is killed, and
// the error says how much CPU it used, so a hang in a busy loop shows.
func TestRunKillsAndTellsCPU(t *testing.T) {
	p := run(500*time.Millisecond, nil, "sh", "-c", "while :; do :; done")
	if p.Err == nil || !strings.Contains(p.Err.Error(), "killed after 500ms") {
		t.Fatalf("err %v, want killed after 500ms", p.Err)
	}
	if !strings.Contains(p.Err.Error(), "user and") {
		t.Fatalf("the error does not tell the CPU used: %v", p.Err)
	}
}
