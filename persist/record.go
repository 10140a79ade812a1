package persist

import (
	"encoding/binary"
	"errors"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
)

// MaxDataBytes bounds the calldata of a logged transaction (the HTTP body
// limit keeps real ones far below it).
const MaxDataBytes = 8 << 20

const (
	txFixedBytes          = 8 + 32 + 1 + 8 + 8 + 20 + 1 + 20 + 32 + 8 + 32 + 32 + 32*3 + 4 + 4
	depositBytes          = 32 + 20 + 20 + 32
	baseFeeBytes          = 32
	tickBytes             = 8
	marketFixedBytes      = 32 + 1 + 20 + 20 + 8 + 32*4 + 3
	kindTx           byte = 1
	kindDeposit      byte = 2
	kindBaseFee      byte = 3
	kindTick         byte = 4
	kindMarket       byte = 5
	// MarketNameBytesMax bounds each of a market's name and symbols.
	MarketNameBytesMax = 255
)

// ErrCorrupt reports a log value that does not decode exactly.
var ErrCorrupt = errors.New("persist: corrupt log record")

// AppendRecord appends the encoding of in to dst.
func AppendRecord(dst []byte, in *core.Input) []byte {
	switch in.Kind {
	case core.InputTx:
		dst = binary.BigEndian.AppendUint64(append(dst, kindTx), uint64(in.TimeUs))
		return appendTx(dst, &in.Tx)
	case core.InputDeposit:
		dst = append(dst, kindDeposit)
		dst = append(dst, in.DepositID[:]...)
		dst = append(dst, in.Token[:]...)
		dst = append(dst, in.To[:]...)
		return appendU256(dst, &in.Amount)
	case core.InputSetBaseFee:
		return appendU256(append(dst, kindBaseFee), &in.BaseFee)
	case core.InputTick:
		return binary.BigEndian.AppendUint64(append(dst, kindTick), uint64(in.TimeUs))
	case core.InputCreateMarket:
		return appendMarket(append(dst, kindMarket), &in.Market)
	}
	panic("BUG: unknown input kind")
}

// appendMarket encodes a market.
// REQUIRES: name and symbols are at most MarketNameBytesMax bytes.
func appendMarket(dst []byte, m *clob.MarketConfig) []byte {
	dst = append(dst, m.ID[:]...)
	dst = append(dst, byte(m.Kind))
	dst = append(dst, m.Base[:]...)
	dst = append(dst, m.Quote[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.IntervalUs))
	dst = appendU256(dst, &m.TickPrecision)
	dst = appendU256(dst, &m.LotSize)
	dst = appendU256(dst, &m.MakerFee)
	dst = appendU256(dst, &m.TakerFee)
	for _, s := range [3]string{m.Name, m.BaseSymbol, m.QuoteSymbol} {
		if len(s) > MarketNameBytesMax {
			panic("BUG: market name longer than MarketNameBytesMax")
		}
		dst = append(append(dst, byte(len(s))), s...)
	}
	return dst
}

func decodeMarket(body []byte, m *clob.MarketConfig) error {
	r := reader{b: body}
	r.bytes(m.ID[:])
	m.Kind = clob.MarketKind(r.u8())
	r.bytes(m.Base[:])
	r.bytes(m.Quote[:])
	m.IntervalUs = int64(r.u64())
	r.u256(&m.TickPrecision)
	r.u256(&m.LotSize)
	r.u256(&m.MakerFee)
	r.u256(&m.TakerFee)
	for _, s := range [3]*string{&m.Name, &m.BaseSymbol, &m.QuoteSymbol} {
		if len(r.b) < 1 || len(r.b) < 1+int(r.b[0]) {
			return ErrCorrupt
		}
		n := int(r.u8())
		*s = string(r.b[:n])
		r.b = r.b[n:]
	}
	if len(r.b) != 0 {
		return ErrCorrupt
	}
	return nil
}

func appendTx(dst []byte, tx *core.Tx) []byte {
	dst = append(dst, tx.Hash[:]...)
	dst = append(dst, tx.Type)
	dst = binary.BigEndian.AppendUint64(dst, tx.ChainID)
	dst = binary.BigEndian.AppendUint64(dst, tx.Nonce)
	dst = append(dst, tx.From[:]...)
	if tx.HasTo {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
	}
	dst = append(dst, tx.To[:]...)
	dst = appendU256(dst, &tx.Value)
	dst = binary.BigEndian.AppendUint64(dst, tx.Gas)
	dst = appendU256(dst, &tx.GasTipCap)
	dst = appendU256(dst, &tx.GasFeeCap)
	dst = appendU256(dst, &tx.V)
	dst = appendU256(dst, &tx.R)
	dst = appendU256(dst, &tx.S)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(tx.Data)))
	dst = append(dst, tx.Data...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(tx.AccessList)))
	for _, t := range tx.AccessList {
		dst = append(dst, t.Address[:]...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(t.StorageKeys)))
		for _, k := range t.StorageKeys {
			dst = append(dst, k[:]...)
		}
	}
	return dst
}

// DecodeRecord decodes one log value. The returned input does not alias b.
func DecodeRecord(b []byte) (core.Input, error) {
	var in core.Input
	if len(b) == 0 {
		return in, ErrCorrupt
	}
	kind, body := b[0], b[1:]
	switch {
	case kind == kindTx && len(body) >= txFixedBytes:
		in.Kind = core.InputTx
		in.TimeUs = int64(binary.BigEndian.Uint64(body))
		return in, decodeTx(body[8:], &in.Tx)
	case kind == kindTick && len(body) == tickBytes:
		in.Kind = core.InputTick
		in.TimeUs = int64(binary.BigEndian.Uint64(body))
		return in, nil
	case kind == kindMarket && len(body) >= marketFixedBytes:
		in.Kind = core.InputCreateMarket
		return in, decodeMarket(body, &in.Market)
	case kind == kindDeposit && len(body) == depositBytes:
		in.Kind = core.InputDeposit
		r := reader{b: body}
		r.bytes(in.DepositID[:])
		r.bytes(in.Token[:])
		r.bytes(in.To[:])
		r.u256(&in.Amount)
		return in, nil
	case kind == kindBaseFee && len(body) == baseFeeBytes:
		in.Kind = core.InputSetBaseFee
		in.BaseFee.SetBytes32(body)
		return in, nil
	}
	return in, ErrCorrupt
}

func decodeTx(body []byte, tx *core.Tx) error {
	r := reader{b: body}
	r.bytes(tx.Hash[:])
	tx.Type = r.u8()
	tx.ChainID = r.u64()
	tx.Nonce = r.u64()
	r.bytes(tx.From[:])
	hasTo := r.u8()
	r.bytes(tx.To[:])
	r.u256(&tx.Value)
	tx.Gas = r.u64()
	r.u256(&tx.GasTipCap)
	r.u256(&tx.GasFeeCap)
	r.u256(&tx.V)
	r.u256(&tx.R)
	r.u256(&tx.S)
	n := r.u32()
	if hasTo > 1 || n > MaxDataBytes || uint64(len(r.b)) < uint64(n)+4 {
		return ErrCorrupt
	}
	tx.HasTo = hasTo == 1
	if n > 0 {
		tx.Data = append([]byte(nil), r.b[:n]...)
	}
	r.b = r.b[n:]
	return decodeAccessList(&r, tx)
}

func decodeAccessList(r *reader, tx *core.Tx) error {
	count := r.u32()
	if uint64(count)*24 > uint64(len(r.b)) {
		return ErrCorrupt
	}
	for range count {
		if len(r.b) < 24 {
			return ErrCorrupt
		}
		var t core.AccessTuple
		r.bytes(t.Address[:])
		keys := r.u32()
		if uint64(keys)*32 > uint64(len(r.b)) {
			return ErrCorrupt
		}
		t.StorageKeys = make([]core.Hash, keys)
		for i := range t.StorageKeys {
			r.bytes(t.StorageKeys[i][:])
		}
		tx.AccessList = append(tx.AccessList, t)
	}
	if len(r.b) != 0 {
		return ErrCorrupt
	}
	return nil
}

func appendU256(dst []byte, v *uint256.Int) []byte {
	b := v.Bytes32()
	return append(dst, b[:]...)
}

// reader consumes fixed-width fields. REQUIRES: the caller checked that b is
// long enough for every fixed field it reads.
type reader struct{ b []byte }

func (r *reader) bytes(dst []byte) { r.b = r.b[copy(dst, r.b):] }
func (r *reader) u8() byte         { v := r.b[0]; r.b = r.b[1:]; return v }
func (r *reader) u32() uint32      { v := binary.BigEndian.Uint32(r.b); r.b = r.b[4:]; return v }
func (r *reader) u64() uint64      { v := binary.BigEndian.Uint64(r.b); r.b = r.b[8:]; return v }
func (r *reader) u256(v *uint256.Int) {
	v.SetBytes32(r.b[:32])
	r.b = r.b[32:]
}
