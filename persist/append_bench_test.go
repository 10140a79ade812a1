package persist

import (
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
)

// BenchmarkAppendTransfers stores b.N transfers as the node does under a
// closed-loop load: groups of 7 inputs, each group with the attestation
// batch of the previous 7 records. Compaction only starts after some
// hundred thousand transfers, so run it long enough to see it:
//
//	go test ./persist -run '^$' -bench AppendTransfers -benchtime 300000x
//
// It reports the process's CPU (Badger's goroutines included) and, on
// Linux, the bytes it wrote to the disk, per transfer. The sub-benchmarks
// are this build's store and the store as it was before the memtable and
// table sizes and the log advice (log.go, trim.go).
func BenchmarkAppendTransfers(b *testing.B) {
	b.Run("store=current", func(b *testing.B) { benchAppendTransfers(b, nil, true) })
	b.Run("store=16MB-memtables,no-advice", func(b *testing.B) {
		benchAppendTransfers(b, func(o badger.Options) badger.Options {
			return o.WithMemTableSize(16 << 20).WithBaseTableSize(2 << 20)
		}, false)
	})
}

func benchAppendTransfers(b *testing.B, tune func(badger.Options) badger.Options, advise bool) {
	dir := b.TempDir()
	l, err := open(dir, tune)
	if err != nil {
		b.Fatal(err)
	}
	if !advise {
		l.advisedAt = time.Now().Add(24 * time.Hour)
	}
	w := newTransferWriter(l)
	b.ReportAllocs()
	cpu0, written0 := cpuTime(), writtenBytes()
	b.ResetTimer()
	for w.place < uint64(b.N) {
		w.appendGroup(b, 7)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/tx")
	if w := writtenBytes(); w >= 0 {
		b.ReportMetric(float64(w-written0)/float64(b.N), "written-B/tx")
	}
	// At rest: what the directory holds once the store is closed (its
	// memtable flushed to a table), the segment files included.
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(diskBytes(b, dir))/float64(b.N), "disk-B/tx")
}

// diskBytes is the space the files under dir take on the disk.
func diskBytes(tb testing.TB, dir string) int64 {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		} else {
			total += fi.Size()
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return total
}

// TestLogAdviceKeepsCommitsSmall: 30 MB into a memtable's log, a commit of
// 7 transfers writes tens of KB, not the hundreds a whole large folio takes
// (trim.go).
func TestLogAdviceKeepsCommitsSmall(t *testing.T) {
	if writtenBytes() < 0 {
		t.Skip("no /proc/self/io here")
	}
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := newTransferWriter(l)
	const commits, measured = 6000, 1500
	var written0 int64
	for i := range commits {
		if i == commits-measured {
			written0 = writtenBytes()
		}
		w.appendGroup(t, 7)
	}
	if perCommit := (writtenBytes() - written0) / measured; perCommit > 40<<10 {
		t.Fatalf("%d bytes written per commit of 7 transfers, want at most 40 KB", perCommit)
	}
}

// transferWriter appends groups of made-up transfers to a log as the node
// does: each group carries its inputs and the attestation batch of the
// previous group's records.
type transferWriter struct {
	l          *Log
	rng        *rand.Rand
	accounts   [16]core.Address
	place, seq uint64
	prev       *Batch
	g          Group
}

func newTransferWriter(l *Log) *transferWriter {
	w := &transferWriter{l: l, rng: rand.New(rand.NewSource(1)), seq: 1}
	for i := range w.accounts {
		w.rng.Read(w.accounts[i][:])
	}
	return w
}

func (w *transferWriter) appendGroup(tb testing.TB, size int) {
	w.g.Reset()
	if w.prev != nil {
		w.g.Batches = append(w.g.Batches, w.prev)
	}
	batch := &Batch{Seq: w.seq, TimeUs: int64(w.seq) * 1000, FirstPlace: w.place}
	w.seq++
	w.rng.Read(batch.Root[:])
	for i := range 4 {
		s := attest.ValidatorSig{}
		s.Validator[19] = byte(i)
		w.rng.Read(s.Signature[:])
		batch.Sigs = append(batch.Sigs, s)
	}
	for range size {
		p := w.place
		tx := core.Tx{Type: core.TxTypeDynamicFee, ChainID: 0x50d, Nonce: p / 16, From: w.accounts[p%16],
			To: w.accounts[(p+3)%16], HasTo: true, Value: *uint256.NewInt(1e15), Gas: 21000,
			GasTipCap: *uint256.NewInt(1e9), GasFeeCap: *uint256.NewInt(3e9)}
		w.rng.Read(tx.Hash[:])
		var sig [64]byte
		w.rng.Read(sig[:])
		tx.R.SetBytes32(sig[:32])
		tx.S.SetBytes32(sig[32:])
		tx.V.SetUint64(1)
		rec := &core.TxRecord{Kind: core.RecordTx, Seq: p + 1, Status: 1, GasUsed: 21000, Tx: tx, TickUs: batch.TimeUs}
		rec.EffectiveGasPrice.SetUint64(2e9)
		var leaf [32]byte
		w.rng.Read(leaf[:])
		w.g.Inputs = append(w.g.Inputs, &core.Input{Kind: core.InputTx, Tx: tx, TimeUs: int64(p)})
		batch.Records = append(batch.Records, rec)
		batch.LeafHashes = append(batch.LeafHashes, leaf)
		w.place++
	}
	batch.Leaves = uint32(len(batch.Records))
	if err := w.l.Append(&w.g); err != nil {
		tb.Fatal(err)
	}
	w.prev = batch
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writtenBytes is what the process has caused to be written to storage so
// far (/proc/self/io), or -1 where that is not known.
func writtenBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "write_bytes:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}
