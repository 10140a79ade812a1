package persist

import (
	"errors"

	"github.com/dgraph-io/badger/v4"
)

// Badger keeps values of at least its value threshold (1 MB here:
// snapshots; published ticks are chunked below it, ticks.go) in value-log
// files, and reclaims a file only when asked: old snapshots are deleted as
// newer ones come, so without it the value log would keep every one.

// ValueLogGCMax bounds the value-log files one CollectValueLog rewrites or
// drops.
const ValueLogGCMax = 8

// valueLogDiscard is the share of a value-log file that must be garbage
// for it to be rewritten (Badger's advice: a lifetime write amplification
// of 2).
const valueLogDiscard = 0.5

// CollectValueLog reclaims the value-log files that are mostly garbage, at
// most ValueLogGCMax of them, and returns how many it reclaimed. It may run
// beside Store.
func (l *Log) CollectValueLog() (int, error) {
	for n := 0; n < ValueLogGCMax; n++ {
		err := l.db.RunValueLogGC(valueLogDiscard)
		if errors.Is(err, badger.ErrNoRewrite) || errors.Is(err, badger.ErrRejected) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return ValueLogGCMax, nil
}
