//go:build !linux

package persist

// TrimMapped does nothing where madvise MADV_PAGEOUT is not available.
func (l *Log) TrimMapped() (int64, error) { return 0, nil }

// adviseLogs does nothing where the folio behaviour it works around is not
// known to exist.
func (l *Log) adviseLogs() {}
