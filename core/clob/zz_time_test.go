package clob

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestZZTime(t *testing.T) {
	dir := os.Getenv("ZZDIR")
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, fn := range files {
		b, _ := os.ReadFile(fn)
		lines := strings.Split(string(b), "\n")
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatal(err)
		}
		data := []byte(s)
		start := time.Now()
		e, rest, err := LoadEngine(Limits{OrdersMax: 64, PendingMax: 64}, data)
		t.Logf("%s: %d bytes, load %v err %v", filepath.Base(fn), len(data), time.Since(start), err)
		if err == nil {
			_ = rest
			acc := newTestAccounts()
			var out TickResult
			for range 3 {
				T, ok := e.NextTickDue(1 << 62)
				if !ok {
					break
				}
				st := time.Now()
				e.Tick(T, acc, &out)
				t.Logf("tick %d: %v, %d events", T, time.Since(st), len(out.Events))
			}
		}
	}
}
