package proc

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// AnvilStartTimeout bounds how long anvil takes to listen.
const AnvilStartTimeout = 30 * time.Second

var anvilListeningRE = regexp.MustCompile(`Listening on (127\.0\.0\.1:\d+)`)

// AnvilBin is the anvil binary `make bridge-tools` installs (its platform
// package's, not npm's Node.js wrapper, whose kill would leave anvil
// running), below the npm prefix dir (bench/bridge/npm).
func AnvilBin(dir string) string {
	return filepath.Join(dir, "node_modules", "@foundry-rs", "anvil-"+runtime.GOOS+"-"+runtime.GOARCH, "bin", "anvil")
}

// StartAnvil starts the anvil binary bin on a free loopback port and
// returns its URL; the test's cleanup kills it (and logs its output if the
// test failed).
func StartAnvil(t testing.TB, bin string) string {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("anvil is missing (%v): run make bridge-tools (npm ci --prefix bench/bridge/npm)", err)
	}
	cmd := exec.Command(bin, "--host", "127.0.0.1", "--port", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		log strings.Builder
	)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := anvilListeningRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			mu.Lock()
			t.Logf("anvil output:\n%s", log.String())
			mu.Unlock()
		}
	})
	select {
	case addr := <-found:
		return "http://" + addr
	case <-time.After(AnvilStartTimeout):
		t.Fatalf("anvil printed no listening line in %v", AnvilStartTimeout)
		return ""
	}
}
