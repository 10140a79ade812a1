package persist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/binread"
)

// Bridge withdrawals (docs/bridge.md §4-§5): the outcome rows of each
// withdrawal batch, written with the tick's input, and the claim proofs,
// written once the committee signed them. All keys start with
// withdrawalPrefix and a second byte naming the family (layout in doc.go).
const withdrawalPrefix = 'w'

// The withdrawal key families, after withdrawalPrefix.
const (
	wdRow     = 'r' // tick time 8 | position 4 → row
	wdHash    = 'h' // tx hash 32 → tick time 8 | position 4
	wdID      = 'i' // withdrawal id 32 → tick time 8 | position 4, for an id other than the tx hash
	wdAccount = 'a' // withdrawer 20 | tick time 8 | position 4 → (empty)
	wdPending = 'q' // tick time 8 | position 4 → (empty): executed, no proof yet
	wdClaim   = 'c' // tx hash 32 → claim hash 32 | proof
)

// WithdrawalErrMax bounds a stored outcome's error string (the ledger's are
// a few bytes; one length byte carries it).
const WithdrawalErrMax = 255

// WithdrawalRow is one withdrawal outcome as stored: the ledger's outcome
// and its position in its batch (the listings' order is (TickUs, Pos)).
type WithdrawalRow struct {
	Out core.WithdrawalOutcome
	Pos uint32
}

// Claim is a withdrawal's claim as stored: the claim hash and the proof the
// committee signed. An empty Proof only settles the row: it leaves the
// pending set without a proof (a token the configuration does not cover).
type Claim struct {
	TxHash    core.Hash
	TickUs    int64
	Pos       uint32
	ClaimHash core.Hash
	Proof     []byte
}

// WithdrawalCursor is where a listing starts: the row at (TickUs, Pos) and
// every later one.
type WithdrawalCursor struct {
	TickUs int64
	Pos    uint32
}

func wdPlace(dst []byte, tickUs int64, pos uint32) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(tickUs))
	return binary.BigEndian.AppendUint32(dst, pos)
}

func wdPlaceKey(family byte, tickUs int64, pos uint32) []byte {
	return wdPlace([]byte{withdrawalPrefix, family}, tickUs, pos)
}

func wdHashKey(family byte, h core.Hash) []byte {
	return append([]byte{withdrawalPrefix, family}, h[:]...)
}

func wdAccountKey(a core.Address, tickUs int64, pos uint32) []byte {
	return wdPlace(append([]byte{withdrawalPrefix, wdAccount}, a[:]...), tickUs, pos)
}

// putWithdrawal adds a row, its indexes and, for an executed one, its place
// in the pending set.
func (s *setter) putWithdrawal(w *WithdrawalRow) error {
	o := &w.Out
	if len(o.Error) > WithdrawalErrMax || o.TickUs < 0 {
		panic("BUG: persist: a withdrawal outcome with an oversized error or a negative time")
	}
	ownID := o.ID != o.TxHash
	v := make([]byte, 0, 32+8+60+34+1+len(o.Error)+32)
	v = append(v, o.TxHash[:]...)
	v = binary.BigEndian.AppendUint64(v, o.Seq)
	v = append(append(append(v, o.Withdrawer[:]...), o.To[:]...), o.Token[:]...)
	v = binread.AppendU256Compact(v, &o.Amount)
	v = append(append(v, byte(len(o.Error))), o.Error...)
	if ownID {
		v = append(v, o.ID[:]...)
	}
	if err := s.set(wdPlaceKey(wdRow, o.TickUs, w.Pos), v); err != nil {
		return err
	}
	place := wdPlace(nil, o.TickUs, w.Pos)
	if err := s.set(wdHashKey(wdHash, o.TxHash), place); err != nil {
		return err
	}
	if ownID {
		if err := s.set(wdHashKey(wdID, o.ID), place); err != nil {
			return err
		}
	}
	if err := s.set(wdAccountKey(o.Withdrawer, o.TickUs, w.Pos), nil); err != nil {
		return err
	}
	if o.Error == "" {
		return s.set(wdPlaceKey(wdPending, o.TickUs, w.Pos), nil)
	}
	return nil
}

// putClaim stores c's proof (if any) and takes its row out of the pending set.
func (s *setter) putClaim(c *Claim) error {
	if len(c.Proof) > 0 {
		v := append(append(make([]byte, 0, 32+len(c.Proof)), c.ClaimHash[:]...), c.Proof...)
		if err := s.set(wdHashKey(wdClaim, c.TxHash), v); err != nil {
			return err
		}
	}
	return s.del(wdPlaceKey(wdPending, c.TickUs, c.Pos))
}

func decodeWithdrawal(key, v []byte, w *WithdrawalRow) error {
	if len(key) != 2+12 {
		return ErrCorrupt
	}
	w.Out.TickUs = int64(binary.BigEndian.Uint64(key[2:]))
	w.Pos = binary.BigEndian.Uint32(key[10:])
	r := newReader(v)
	r.bytes(w.Out.TxHash[:])
	w.Out.Seq = r.U64()
	r.bytes(w.Out.Withdrawer[:])
	r.bytes(w.Out.To[:])
	r.bytes(w.Out.Token[:])
	r.U256Compact(&w.Out.Amount)
	w.Out.Error = string(r.Take(int(r.U8())))
	w.Out.ID = w.Out.TxHash // the Bridge's, and every row of builds before the orderbook's withdraw
	if len(r.rest()) == 32 {
		r.bytes(w.Out.ID[:])
		if w.Out.ID == w.Out.TxHash {
			return ErrCorrupt // stored only when it differs
		}
	}
	return r.end()
}

// Withdrawal reads the row of the withdrawal whose tx hash or withdrawal
// id is h, and its claim (nil while there is none); found is false when no
// batch executed it. A tx hash is looked up first: an id other than its
// row's tx hash is a keccak of other bytes, so the two never name
// different rows.
func (l *Log) Withdrawal(h core.Hash) (row WithdrawalRow, c *Claim, found bool, err error) {
	err = l.db.View(func(txn *badger.Txn) error {
		place, err := getValue(txn, wdHashKey(wdHash, h))
		if place == nil && err == nil {
			place, err = getValue(txn, wdHashKey(wdID, h))
		}
		if place == nil || err != nil {
			return err
		}
		if len(place) != 12 {
			return ErrCorrupt
		}
		if row, err = readRow(txn, place); err != nil {
			return err
		}
		found = true
		cv, err := getValue(txn, wdHashKey(wdClaim, row.Out.TxHash))
		if cv == nil || err != nil {
			return err
		}
		if len(cv) <= 32 {
			return ErrCorrupt
		}
		c = &Claim{TxHash: row.Out.TxHash, TickUs: row.Out.TickUs, Pos: row.Pos, ClaimHash: core.Hash(cv[:32]), Proof: cv[32:]}
		return nil
	})
	if err != nil {
		return WithdrawalRow{}, nil, false, fmt.Errorf("withdrawal %x: %w", h, err)
	}
	return row, c, found, nil
}

// readRow reads the row at place (tick time 8 | position 4), which an
// index names: a missing row is corruption.
func readRow(txn *badger.Txn, place []byte) (WithdrawalRow, error) {
	var w WithdrawalRow
	key := append([]byte{withdrawalPrefix, wdRow}, place...)
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return w, ErrCorrupt // an index row without its row
	}
	if err != nil {
		return w, err
	}
	return w, item.Value(func(v []byte) error { return decodeWithdrawal(key, v, &w) })
}

// getValue copies the value at key; nil, nil when there is none.
func getValue(txn *badger.Txn, key []byte) ([]byte, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return item.ValueCopy(nil)
}

// Withdrawals appends to dst the rows from cursor on, in (TickUs, Pos)
// order, at most limit of them: every withdrawer's, or only account's when
// it is not nil. It reads one consistent view, beside Append.
func (l *Log) Withdrawals(dst []WithdrawalRow, account *core.Address, from WithdrawalCursor, limit int) ([]WithdrawalRow, error) {
	if account == nil {
		return l.scanRows(dst, []byte{withdrawalPrefix, wdRow}, from, limit, "withdrawal listing")
	}
	return l.scanRows(dst, append([]byte{withdrawalPrefix, wdAccount}, account[:]...), from, limit, "withdrawal listing")
}

// PendingClaims appends to dst the oldest executed rows that have no claim
// yet, at most limit of them, in (TickUs, Pos) order.
func (l *Log) PendingClaims(dst []WithdrawalRow, limit int) ([]WithdrawalRow, error) {
	return l.scanRows(dst, []byte{withdrawalPrefix, wdPending}, WithdrawalCursor{}, limit, "pending withdrawal claims")
}

// scanRows appends up to limit rows of the family under prefix, whose keys
// end in a place, from `from` on: the rows themselves, or the rows an index
// names; what names the read in an error.
func (l *Log) scanRows(dst []WithdrawalRow, prefix []byte, from WithdrawalCursor, limit int, what string) ([]WithdrawalRow, error) {
	rows := prefix[1] == wdRow
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(wdPlace(bytes.Clone(prefix), from.TickUs, from.Pos)); it.Valid() && limit > 0; it.Next() {
			var w WithdrawalRow
			var err error
			if key := it.Item().Key(); rows {
				err = it.Item().Value(func(v []byte) error { return decodeWithdrawal(key, v, &w) })
			} else {
				w, err = readRow(txn, key[len(prefix):])
			}
			if err != nil {
				return err
			}
			dst = append(dst, w)
			limit--
		}
		return nil
	})
	if err != nil {
		return dst, fmt.Errorf("%s: %w", what, err)
	}
	return dst, nil
}
