package persist

import (
	"errors"

	"github.com/dgraph-io/badger/v4"
)

// Badger keeps values of at least its value threshold (1 MB here: the
// published ticks of busy auctions, snapshots) in value-log files, and
// reclaims a file only when asked: the published ticks past KeepTicks and
// the old snapshots are deleted all the time, so without it the value log
// would grow with every busy tick ever stored.

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
