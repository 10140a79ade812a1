package persist

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// genesisKey holds the node's genesis description (opaque here: the node
// encodes it), so that an offline replay starts from the genesis the
// session ran under.
var genesisKey = []byte("genesis")

// GenesisBytesMax bounds a stored genesis description: a larger one is
// refused on write and treated as corruption on read.
const GenesisBytesMax = 1 << 20

// OpenReadOnly opens the log in dir for reading only (ledgerd replay), in
// Badger's read-only mode: nothing in dir is written, and the directory
// lock is taken shared, so a directory a running node holds (its lock
// exclusive) is refused. A directory that holds no log is refused too,
// never created. Append, SetGenesis and the pruning calls fail on such a
// log.
func OpenReadOnly(dir string) (*Log, error) {
	if _, err := os.Stat(filepath.Join(dir, badger.ManifestFilename)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%q holds no intent log (no %s): not a ledgerd data directory", dir, badger.ManifestFilename)
		}
		return nil, fmt.Errorf("cannot read the data directory %q: %w", dir, err)
	}
	l, err := open(dir, func(o badger.Options) badger.Options { return o.WithReadOnly(true) })
	// Badger formats the lock failure into its message (no wrapped error
	// to test for).
	if err != nil && strings.Contains(err.Error(), "Cannot acquire directory lock") {
		return nil, fmt.Errorf("%q is in use by a running node: stop it first (a replay reads the directory and never writes it): %w", dir, err)
	}
	return l, err
}

// SetGenesis stores the node's genesis description, replacing the one
// stored (unchanged bytes are not rewritten).
func (l *Log) SetGenesis(desc []byte) error {
	if len(desc) > GenesisBytesMax {
		return fmt.Errorf("genesis description of %d bytes, at most %d", len(desc), GenesisBytesMax)
	}
	old, err := l.Genesis()
	if err != nil || bytes.Equal(old, desc) {
		return err
	}
	if err := l.db.Update(func(txn *badger.Txn) error { return txn.Set(genesisKey, desc) }); err != nil {
		return fmt.Errorf("cannot store the genesis description: %w", err)
	}
	return nil
}

// Genesis returns the stored genesis description, nil when none is stored
// (a data directory written before the key existed).
func (l *Log) Genesis() ([]byte, error) {
	var desc []byte
	err := l.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(genesisKey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if item.ValueSize() > GenesisBytesMax {
			return fmt.Errorf("%w: genesis description of %d bytes", ErrCorrupt, item.ValueSize())
		}
		desc, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read the genesis description: %w", err)
	}
	return desc, nil
}

// FirstSeq returns the seq of the oldest stored input: 1 unless retention
// pruned the log's start (PruneLogBefore), 0 for an empty log.
func (l *Log) FirstSeq() uint64 { return l.segs.first() }
