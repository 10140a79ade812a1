package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/binread"
)

// History: the attested records and their indexes, written with the batch
// that attests them (layout in doc.go). A record's place is its position in
// attestation order, counted from 0 over all batches: the order of the
// history listings, and (attestation times never decrease) of time.
const (
	recordPrefix  = 'r' // place → batch seq | leaf | record
	hashPrefix    = 'h' // tx hash → place
	accountPrefix = 'a' // address | place → (empty)
	logPrefixIdx  = 'l' // place | log index → address | topics
	linkPrefix    = 'k' // intent hash → tick time | tick hash
	timePrefix    = 't' // batch time | batch seq → first place
)

// MaxRecordLogs bounds the logs of one stored record, MaxLogTopics the topics
// of one log (the EVM's limit is 4; the orderbook emits at most 4).
const (
	MaxRecordLogs = 1 << 20
	MaxLogTopics  = 4
)

// Stored is one attested record read back from the history.
type Stored struct {
	Place    uint64
	BatchSeq uint64
	Leaf     uint32
	Rec      core.TxRecord
}

// TickLink names the auction tick an orderbook transaction landed in.
type TickLink struct {
	Intent   core.Hash
	TickUs   int64
	TickHash core.Hash
}

// Head is where the history ends: the next place and batch sequence number
// to assign, and the newest batch's time (0, 1, 0 when nothing is attested).
type Head struct {
	NextPlace uint64
	NextSeq   uint64
	LastUs    int64
}

// setter adds keys to a write transaction, committing and starting another
// when Badger says the transaction is full.
type setter struct {
	db  *badger.DB
	txn *badger.Txn
	sc  *storeScratch
}

// storeScratch is what one Store writes its rows with, reused by the next.
type storeScratch struct {
	slab slab
	// plain and packed are a record's encoding before and after it is
	// compressed, ticks a tick file's (writeTickFile).
	plain, packed, ticks []byte
}

// storeTicksKept bounds the ticks' buffer a Store leaves for the next one.
const storeTicksKept = 16 << 20

// done makes what the Store took free for the next one.
// REQUIRES: its transaction is committed or discarded.
func (sc *storeScratch) done() {
	sc.slab.reset()
	sc.ticks = sc.ticks[:0]
	if cap(sc.ticks) > storeTicksKept {
		sc.ticks = nil
	}
}

func (s *setter) set(key, val []byte) error {
	return s.do(func(txn *badger.Txn) error { return txn.Set(key, val) }, "append to")
}

// del is set's counterpart for a deletion.
func (s *setter) del(key []byte) error {
	return s.do(func(txn *badger.Txn) error { return txn.Delete(key) }, "delete from")
}

// do applies op to the transaction, committing it and retrying op on a new
// one when Badger says it is full; what names op in the error.
func (s *setter) do(op func(*badger.Txn) error, what string) error {
	err := op(s.txn)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if err = s.txn.Commit(); err != nil {
			return fmt.Errorf("cannot commit intent log: %w", err)
		}
		s.txn = s.db.NewTransaction(true)
		err = op(s.txn)
	}
	if err != nil {
		return fmt.Errorf("cannot %s intent log: %w", what, err)
	}
	return nil
}

// putBatch writes b and the history rows of its records.
func (s *setter) putBatch(b *Batch) error {
	if len(b.Records) != int(b.Leaves) || len(b.LeafHashes) != int(b.Leaves) {
		panic("BUG: persist: a batch whose records or leaves do not match its leaf count")
	}
	if err := s.set(batchKey(b.Seq), appendBatch(nil, b)); err != nil {
		return err
	}
	tk := make([]byte, 17)
	tk[0] = timePrefix
	binary.BigEndian.PutUint64(tk[1:], uint64(b.TimeUs))
	binary.BigEndian.PutUint64(tk[9:], b.Seq)
	if err := s.set(tk, binary.BigEndian.AppendUint64(nil, b.FirstPlace)); err != nil {
		return err
	}
	sc := s.sc
	for i, rec := range b.Records {
		place := b.FirstPlace + uint64(i)
		sc.plain = appendTxRecord(sc.plain[:0], rec)
		sc.packed = appendStoredRecord(sc.packed[:0], sc.plain)
		val := binary.BigEndian.AppendUint64(sc.slab.take(12+len(sc.packed)), b.Seq)
		val = append(binary.BigEndian.AppendUint32(val, uint32(i)), sc.packed...)
		if err := s.set(appendU64Key(sc.slab.take(u64KeyLen), recordPrefix, place), val); err != nil {
			return err
		}
		val = binary.BigEndian.AppendUint64(sc.slab.take(8), place)
		if err := s.set(appendHashKey(sc.slab.take(hashKeyLen), hashPrefix, rec.Tx.Hash), val); err != nil {
			return err
		}
		if err := s.set(appendAccountKey(sc.slab.take(accountKeyLen), rec.Tx.From, place), nil); err != nil {
			return err
		}
		if rec.Tx.HasTo && rec.Tx.To != rec.Tx.From {
			if err := s.set(appendAccountKey(sc.slab.take(accountKeyLen), rec.Tx.To, place), nil); err != nil {
				return err
			}
		}
		if len(rec.Logs) > 0 {
			// One row for all of the record's logs: a ladder has one per
			// order, and a row per log was ~5 % of the node's CPU under
			// market-maker ladders (BENCHMARKS.md, issue 25).
			n := binary.MaxVarintLen32
			for li := range rec.Logs {
				n += logKeyFieldsLen(&rec.Logs[li])
			}
			val := binary.AppendUvarint(sc.slab.take(n), uint64(len(rec.Logs)))
			for li := range rec.Logs {
				val = appendLogKeyFields(val, &rec.Logs[li])
			}
			if err := s.set(appendU64Key(sc.slab.take(u64KeyLen), logPrefixIdx, place), val); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *setter) putLink(k *TickLink) error {
	val := binary.BigEndian.AppendUint64(s.sc.slab.take(8+len(k.TickHash)), uint64(k.TickUs))
	return s.set(appendHashKey(s.sc.slab.take(hashKeyLen), linkPrefix, k.Intent), append(val, k.TickHash[:]...))
}

// The keys' lengths.
const (
	u64KeyLen     = 1 + 8
	hashKeyLen    = 1 + len(core.Hash{})
	accountKeyLen = 1 + len(core.Address{}) + 8
)

// u64Key is prefix followed by v, big-endian: keys that sort by v.
func u64Key(prefix byte, v uint64) []byte {
	return appendU64Key(make([]byte, 0, u64KeyLen), prefix, v)
}

func appendU64Key(dst []byte, prefix byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, prefix), v)
}

func hashKey(prefix byte, h core.Hash) []byte {
	return appendHashKey(make([]byte, 0, hashKeyLen), prefix, h)
}

func appendHashKey(dst []byte, prefix byte, h core.Hash) []byte {
	return append(append(dst, prefix), h[:]...)
}

func accountKey(a core.Address, place uint64) []byte {
	return appendAccountKey(make([]byte, 0, accountKeyLen), a, place)
}

func appendAccountKey(dst []byte, a core.Address, place uint64) []byte {
	return binary.BigEndian.AppendUint64(append(append(dst, accountPrefix), a[:]...), place)
}

// logKeyFieldsLen is the length appendLogKeyFields appends.
func logKeyFieldsLen(lg *core.Log) int { return len(lg.Address) + 1 + len(lg.Topics)*len(core.Hash{}) }

// appendLogKeyFields appends what a log filter looks at: address and topics.
func appendLogKeyFields(dst []byte, lg *core.Log) []byte {
	if len(lg.Topics) > MaxLogTopics {
		panic("BUG: persist: a log with more than MaxLogTopics topics")
	}
	dst = append(dst, lg.Address[:]...)
	dst = append(dst, byte(len(lg.Topics)))
	for _, t := range lg.Topics {
		dst = append(dst, t[:]...)
	}
	return dst
}

// storedRecordS2 marks a record row whose record is s2-compressed (block
// format); a plain record starts with its kind, below it.
const storedRecordS2 = 0x80

// storedRecordMax bounds a compressed record's decoded length: a longer
// one is corruption.
const storedRecordMax = 4 * MaxDataBytes

// appendStoredRecord appends plain (appendTxRecord's bytes) as a record
// row holds it: s2-compressed when that saves an eighth or more (a
// transaction's calldata and logs are ABI words, mostly zero bytes), else
// as is.
func appendStoredRecord(dst, plain []byte) []byte {
	at := len(dst)
	dst = append(dst, storedRecordS2)
	n := s2.MaxEncodedLen(len(plain))
	dst = slices.Grow(dst, n)
	// Given exactly its bound, Encode writes into dst's spare capacity.
	if enc := s2.Encode(dst[len(dst):len(dst)+n], plain); len(enc) <= len(plain)-len(plain)/8 {
		return dst[:len(dst)+len(enc)]
	}
	return append(dst[:at], plain...)
}

// decodeStoredRecord decodes a record row's record (appendStoredRecord's
// bytes) into rec, which does not alias b.
func decodeStoredRecord(b []byte, rec *core.TxRecord) error {
	if len(b) > 0 && b[0] == storedRecordS2 {
		n, err := s2.DecodedLen(b[1:])
		if err != nil || n > storedRecordMax {
			return ErrCorrupt
		}
		if b, err = s2.Decode(make([]byte, n), b[1:]); err != nil {
			return ErrCorrupt
		}
	}
	return decodeTxRecord(b, rec)
}

// appendTxRecord appends a record's encoding: kind 1 | seq 8 | status 1 |
// gasUsed 8 | effectiveGasPrice u256 | tickUs 8 | nLogs 4 | logs | tx (as in
// the log, to the end). A log is address 20 | nTopics 1 | topics | dataLen 4
// | data.
func appendTxRecord(dst []byte, rec *core.TxRecord) []byte {
	dst = append(dst, byte(rec.Kind))
	dst = binary.BigEndian.AppendUint64(dst, rec.Seq)
	dst = append(dst, rec.Status)
	dst = binary.BigEndian.AppendUint64(dst, rec.GasUsed)
	dst = binread.AppendU256Compact(dst, &rec.EffectiveGasPrice)
	dst = binary.BigEndian.AppendUint64(dst, uint64(rec.TickUs))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(rec.Logs)))
	for i := range rec.Logs {
		lg := &rec.Logs[i]
		dst = appendLogKeyFields(dst, lg)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(lg.Data)))
		dst = append(dst, lg.Data...)
	}
	return appendTx(dst, &rec.Tx)
}

// decodeTxRecord decodes appendTxRecord's bytes; the record does not alias b.
func decodeTxRecord(b []byte, rec *core.TxRecord) error {
	r := newReader(b)
	rec.Kind = core.RecordKind(r.U8())
	rec.Seq = r.U64()
	rec.Status = r.U8()
	rec.GasUsed = r.U64()
	r.U256Compact(&rec.EffectiveGasPrice)
	rec.TickUs = int64(r.U64())
	n := r.U32()
	if rec.Kind < core.RecordTx || rec.Kind > core.RecordTick || rec.Status > 1 || n > MaxRecordLogs || uint64(n)*(20+1+4) > uint64(r.Left()) {
		return ErrCorrupt
	}
	if n > 0 {
		rec.Logs = make([]core.Log, n)
	}
	for i := range rec.Logs {
		lg := &rec.Logs[i]
		rest, err := decodeLogKeyFields(r.rest(), lg)
		if err != nil {
			return ErrCorrupt
		}
		r.Off = len(r.B) - len(rest)
		if dn := r.U32(); dn > 0 {
			lg.Data = append([]byte{}, r.Take(int(dn))...)
		} else {
			lg.Data = []byte{}
		}
	}
	decodeTx(&r, &rec.Tx)
	return r.end()
}

// decodeLogKeyFields decodes appendLogKeyFields's bytes at the start of b
// into lg's address and topics and returns the rest.
func decodeLogKeyFields(b []byte, lg *core.Log) ([]byte, error) {
	if len(b) < 21 {
		return nil, ErrCorrupt
	}
	copy(lg.Address[:], b)
	n := int(b[20])
	b = b[21:]
	if n > MaxLogTopics || len(b) < 32*n {
		return nil, ErrCorrupt
	}
	lg.Topics = make([]core.Hash, n)
	for i := range lg.Topics {
		copy(lg.Topics[i][:], b[32*i:])
	}
	return b[32*n:], nil
}

// Head returns where the history ends, from the newest stored batch (the
// newest the checkpoint covers while a store whose machine stopped is not
// rebuilt: checkpoint.go).
func (l *Log) Head() (Head, error) {
	limit := ^uint64(0)
	if l.after != nil {
		limit = l.after.nextBatch - 1
	}
	var h Head
	err := l.db.View(func(txn *badger.Txn) error {
		var err error
		h, err = headIn(txn, limit)
		return err
	})
	return h, err
}

// headIn returns where the history ends, from the newest stored batch with
// a seq up to limit.
func headIn(txn *badger.Txn, limit uint64) (Head, error) {
	h := Head{NextSeq: 1}
	if limit == 0 {
		return h, nil
	}
	it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: []byte{batchPrefix}})
	defer it.Close()
	it.Seek(batchKey(limit))
	if !it.Valid() {
		return h, nil
	}
	if len(it.Item().Key()) != 9 {
		return h, fmt.Errorf("%w: attestation batch key %x", ErrCorrupt, it.Item().Key())
	}
	b := Batch{Seq: binary.BigEndian.Uint64(it.Item().Key()[1:])}
	if err := it.Item().Value(func(v []byte) error { return decodeBatch(v, &b) }); err != nil {
		return h, fmt.Errorf("attestation batch %d: %w", b.Seq, err)
	}
	return Head{NextPlace: b.FirstPlace + uint64(b.Leaves), NextSeq: b.Seq + 1, LastUs: b.TimeUs}, nil
}

// RecordByHash returns the attested record with this transaction hash; nil
// when the history has none (unknown, not yet attested, or pruned).
func (l *Log) RecordByHash(h core.Hash) (*Stored, error) {
	var s *Stored
	err := l.db.View(func(txn *badger.Txn) error {
		place, ok, err := getPlace(txn, h)
		if !ok || err != nil {
			return err
		}
		s, err = getRecord(txn, place)
		return err
	})
	return s, err
}

// HasHash reports whether the history holds a record with this hash.
func (l *Log) HasHash(h core.Hash) (bool, error) {
	var ok bool
	err := l.db.View(func(txn *badger.Txn) error {
		var err error
		_, ok, err = getPlace(txn, h)
		return err
	})
	return ok, err
}

// Records returns the records at places, in that order; a pruned place
// comes back nil.
func (l *Log) Records(places []uint64) ([]*Stored, error) {
	out := make([]*Stored, len(places))
	err := l.db.View(func(txn *badger.Txn) error {
		for i, p := range places {
			s, err := getRecord(txn, p)
			if err != nil {
				return err
			}
			out[i] = s
		}
		return nil
	})
	return out, err
}

func getPlace(txn *badger.Txn, h core.Hash) (uint64, bool, error) {
	item, err := txn.Get(hashKey(hashPrefix, h))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("history: %w", err)
	}
	var place uint64
	err = item.Value(func(v []byte) error {
		if len(v) != 8 {
			return ErrCorrupt
		}
		place = binary.BigEndian.Uint64(v)
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("history: hash index of %x: %w", h[:4], err)
	}
	return place, true, nil
}

func getRecord(txn *badger.Txn, place uint64) (*Stored, error) {
	item, err := txn.Get(u64Key(recordPrefix, place))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	s := &Stored{Place: place}
	err = item.Value(func(v []byte) error {
		if len(v) < 12 {
			return ErrCorrupt
		}
		s.BatchSeq = binary.BigEndian.Uint64(v)
		s.Leaf = binary.BigEndian.Uint32(v[8:])
		return decodeStoredRecord(v[12:], &s.Rec)
	})
	if err != nil {
		return nil, fmt.Errorf("history: record at place %d: %w", place, err)
	}
	return s, nil
}

// Batch returns the stored batch seq with its leaf hashes; nil when there is
// none (not yet stored, or pruned).
func (l *Log) Batch(seq uint64) (*Batch, error) {
	var b *Batch
	err := l.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(batchKey(seq))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		b = &Batch{Seq: seq}
		return item.Value(func(v []byte) error { return decodeBatch(v, b) })
	})
	if err != nil {
		return nil, fmt.Errorf("attestation batch %d: %w", seq, err)
	}
	return b, nil
}

// TickLinkOf returns the tick the orderbook transaction intent landed in;
// ok is false while it has not landed (or for any other hash).
func (l *Log) TickLinkOf(intent core.Hash) (k TickLink, ok bool, err error) {
	err = l.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(hashKey(linkPrefix, intent))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) != 8+32 {
				return ErrCorrupt
			}
			k = TickLink{Intent: intent, TickUs: int64(binary.BigEndian.Uint64(v))}
			copy(k.TickHash[:], v[8:])
			ok = true
			return nil
		})
	})
	if err != nil {
		return k, false, fmt.Errorf("history: tick link of %x: %w", intent[:4], err)
	}
	return k, ok, nil
}

// PlaceAfter returns the first place attested after sinceUs (at or after it
// when incl), or the head's next place when none is.
func (l *Log) PlaceAfter(sinceUs int64, incl bool) (uint64, error) {
	seek := make([]byte, 9)
	seek[0] = timePrefix
	from := uint64(sinceUs)
	if sinceUs < 0 {
		from = 0
	} else if !incl {
		from++
	}
	binary.BigEndian.PutUint64(seek[1:], from)
	place, found := uint64(0), false
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{timePrefix}})
		defer it.Close()
		it.Seek(seek)
		if !it.Valid() {
			return nil
		}
		return it.Item().Value(func(v []byte) error {
			if len(v) != 8 {
				return ErrCorrupt
			}
			place, found = binary.BigEndian.Uint64(v), true
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("history: time index: %w", err)
	}
	if !found {
		h, err := l.Head()
		return h.NextPlace, err
	}
	return place, nil
}

// AccountPlaces calls fn with the places of the records sent from or to a
// whose place lies in [lo, hi), ascending or (desc) descending, until fn
// returns false.
func (l *Log) AccountPlaces(a core.Address, lo, hi uint64, desc bool, fn func(place uint64) bool) error {
	if lo >= hi {
		return nil
	}
	prefix := append([]byte{accountPrefix}, a[:]...)
	return l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: desc})
		defer it.Close()
		if desc {
			it.Seek(accountKey(a, hi-1))
		} else {
			it.Seek(accountKey(a, lo))
		}
		for ; it.Valid(); it.Next() {
			place := binary.BigEndian.Uint64(it.Item().Key()[21:])
			if place < lo || place >= hi || !fn(place) {
				return nil
			}
		}
		return nil
	})
}

// ScanLogs calls fn with the address and topics of each stored log whose
// record's place lies in [lo, hi), in order, until fn returns false. lg is
// reused between calls.
//
// A record's logs are one row ('l' | place); earlier builds wrote a row
// per log ('l' | place | index), which sorts after it and is read too (a
// record has rows of one form only).
func (l *Log) ScanLogs(lo, hi uint64, fn func(place uint64, index int, lg *core.Log) bool) error {
	if lo >= hi {
		return nil
	}
	return l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{logPrefixIdx}})
		defer it.Close()
		var lg core.Log
		for it.Seek(u64Key(logPrefixIdx, lo)); it.Valid(); it.Next() {
			key := it.Item().Key()
			if len(key) != u64KeyLen && len(key) != u64KeyLen+4 {
				return fmt.Errorf("history: a log index key of %d bytes: %w", len(key), ErrCorrupt)
			}
			place := binary.BigEndian.Uint64(key[1:])
			if place >= hi {
				return nil
			}
			more := true
			err := it.Item().Value(func(v []byte) error {
				if len(key) == u64KeyLen+4 { // one log
					rest, err := decodeLogKeyFields(v, &lg)
					if err == nil && len(rest) != 0 {
						err = ErrCorrupt
					}
					more = err != nil || fn(place, int(binary.BigEndian.Uint32(key[9:])), &lg)
					return err
				}
				n, k := binary.Uvarint(v)
				if k <= 0 || n == 0 || n > MaxRecordLogs {
					return ErrCorrupt
				}
				v = v[k:]
				for i := range int(n) {
					var err error
					if v, err = decodeLogKeyFields(v, &lg); err != nil {
						return err
					}
					if !fn(place, i, &lg) {
						more = false
						return nil
					}
				}
				if len(v) != 0 {
					return ErrCorrupt
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("history: log index at place %d: %w", place, err)
			}
			if !more {
				return nil
			}
		}
		return nil
	})
}

// PruneBefore deletes the attested history older than cutoffUs: whole
// batches whose time is before it, with their records and index rows, at
// most maxRecords records per call (the caller calls again while more is
// left). The newest batch is always kept: it carries the head (the next
// sequence number and place), so nothing is ever signed twice. It returns
// the records deleted and the highest input seq among them.
func (l *Log) PruneBefore(cutoffUs int64, maxRecords int) (pruned int, lastSeq uint64, err error) {
	head, err := l.Head()
	if err != nil || head.NextSeq <= 2 {
		return 0, 0, err
	}
	var dels [][]byte
	err = l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{timePrefix}})
		defer it.Close()
		for it.Rewind(); it.Valid() && pruned < maxRecords; it.Next() {
			key := it.Item().KeyCopy(nil)
			ts, seq := int64(binary.BigEndian.Uint64(key[1:])), binary.BigEndian.Uint64(key[9:])
			if ts >= cutoffUs || seq >= head.NextSeq-1 {
				return nil
			}
			b := Batch{Seq: seq}
			item, err := txn.Get(batchKey(seq))
			if err != nil {
				return fmt.Errorf("attestation batch %d: %w", seq, err)
			}
			if err := item.Value(func(v []byte) error { return decodeBatch(v, &b) }); err != nil {
				return fmt.Errorf("attestation batch %d: %w", seq, err)
			}
			for i := range uint64(b.Leaves) {
				s, err := getRecord(txn, b.FirstPlace+i)
				if err != nil {
					return err
				}
				if s != nil {
					perLog := false
					if len(s.Rec.Logs) > 0 {
						_, err := txn.Get(u64Key(logPrefixIdx, s.Place))
						if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
							return fmt.Errorf("history: %w", err)
						}
						perLog = err != nil
					}
					dels = appendRecordKeys(dels, s, perLog)
					lastSeq = max(lastSeq, s.Rec.Seq)
				}
				pruned++
			}
			dels = append(dels, key, batchKey(seq))
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	return pruned, lastSeq, l.deleteKeys(dels)
}

// appendRecordKeys appends every key the history holds for s; perLog: its
// logs' index rows are an earlier build's, one per log.
func appendRecordKeys(dst [][]byte, s *Stored, perLog bool) [][]byte {
	rec := &s.Rec
	dst = append(dst, u64Key(recordPrefix, s.Place), hashKey(hashPrefix, rec.Tx.Hash), hashKey(linkPrefix, rec.Tx.Hash),
		accountKey(rec.Tx.From, s.Place))
	if rec.Tx.HasTo && rec.Tx.To != rec.Tx.From {
		dst = append(dst, accountKey(rec.Tx.To, s.Place))
	}
	if perLog {
		for li := range rec.Logs {
			dst = append(dst, binary.BigEndian.AppendUint32(u64Key(logPrefixIdx, s.Place), uint32(li)))
		}
	} else if len(rec.Logs) > 0 {
		dst = append(dst, u64Key(logPrefixIdx, s.Place))
	}
	return dst
}

// PruneLogBefore deletes the logged inputs before seq (the caller keeps
// every input after its oldest snapshot).
func (l *Log) PruneLogBefore(seq uint64) error { return l.segs.pruneBefore(seq) }

// keysBefore returns the keys of prefix whose u64Key value is below v.
func (l *Log) keysBefore(prefix byte, v uint64) ([][]byte, error) {
	var keys [][]byte
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{prefix}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if binary.BigEndian.Uint64(it.Item().Key()[1:]) >= v {
				break
			}
			keys = append(keys, it.Item().KeyCopy(nil))
		}
		return nil
	})
	return keys, err
}

func (l *Log) deleteKeys(keys [][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	wb := l.db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range keys {
		if err := wb.Delete(k); err != nil {
			return fmt.Errorf("cannot delete from intent log: %w", err)
		}
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("cannot delete from intent log: %w", err)
	}
	return nil
}
