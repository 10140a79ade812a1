package persist

import (
	"encoding/binary"
	"errors"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/binread"
	"github.com/ledgervenue/node/core/clob"
)

// MaxDataBytes bounds the calldata of a logged transaction (the HTTP body
// limit keeps real ones far below it).
const MaxDataBytes = 8 << 20

const (
	kindTx      byte = 1
	kindDeposit byte = 2
	kindBaseFee byte = 3
	kindTick    byte = 4
	kindMarket  byte = 5
	// kindPerpMarket is a market record followed by its perp parameters
	// (a spot market keeps kindMarket, so logs written before perps decode
	// unchanged).
	kindPerpMarket byte = 6
	kindSetOracle  byte = 7
	kindLock       byte = 8
	kindSetBalance byte = 9
	kindSetNonce   byte = 10
	kindClock      byte = 11
	// kindTxStaged is a transaction admitted while a tick cleared
	// (core.Input.Staged), laid out as kindTx.
	kindTxStaged byte = 12
	// kindMoveOracle is the strategy lab's oracle jump or gap:
	// | book 32 B | bps i32 | until µs u64 |.
	kindMoveOracle byte = 13
	// MarketNameBytesMax bounds each of a market's name and symbols.
	MarketNameBytesMax = 255
)

// ErrCorrupt reports a log value that does not decode exactly.
var ErrCorrupt = errors.New("persist: corrupt log record")

// AppendRecord appends the encoding of in to dst.
func AppendRecord(dst []byte, in *core.Input) []byte {
	switch in.Kind {
	case core.InputTx:
		kind := kindTx
		if in.Staged {
			kind = kindTxStaged
		}
		dst = binary.BigEndian.AppendUint64(append(dst, kind), uint64(in.TimeUs))
		return appendTx(dst, &in.Tx)
	case core.InputDeposit:
		dst = append(dst, kindDeposit)
		dst = append(dst, in.DepositID[:]...)
		dst = append(dst, in.Token[:]...)
		dst = append(dst, in.To[:]...)
		return binread.AppendU256Compact(dst, &in.Amount)
	case core.InputSetBaseFee:
		return binread.AppendU256Compact(append(dst, kindBaseFee), &in.BaseFee)
	case core.InputTick:
		return binary.BigEndian.AppendUint64(append(dst, kindTick), uint64(in.TimeUs))
	case core.InputCreateMarket:
		if in.Market.Kind == clob.Perp {
			return appendPerpParams(appendMarket(append(dst, kindPerpMarket), &in.Market), &in.Market.Perp)
		}
		return appendMarket(append(dst, kindMarket), &in.Market)
	case core.InputSetOracle:
		dst = append(append(dst, kindSetOracle), in.Book[:]...)
		return binread.AppendU256Compact(dst, &in.Price)
	case core.InputLockAccount:
		return append(append(dst, kindLock), in.To[:]...)
	case core.InputSetBalance:
		return binread.AppendU256Compact(append(append(dst, kindSetBalance), in.To[:]...), &in.Amount)
	case core.InputSetNonce:
		return binary.BigEndian.AppendUint64(append(append(dst, kindSetNonce), in.To[:]...), in.Nonce)
	case core.InputClockOffset:
		return binary.BigEndian.AppendUint64(append(dst, kindClock), uint64(in.TimeUs))
	case core.InputMoveOracle:
		dst = binary.BigEndian.AppendUint32(append(append(dst, kindMoveOracle), in.Book[:]...), uint32(in.Bps))
		return binary.BigEndian.AppendUint64(dst, uint64(in.TimeUs))
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
	dst = binread.AppendU256Compact(dst, &m.TickPrecision)
	dst = binread.AppendU256Compact(dst, &m.LotSize)
	dst = binread.AppendU256Compact(dst, &m.MakerFee)
	dst = binread.AppendU256Compact(dst, &m.TakerFee)
	for _, s := range [3]string{m.Name, m.BaseSymbol, m.QuoteSymbol} {
		if len(s) > MarketNameBytesMax {
			panic("BUG: market name longer than MarketNameBytesMax")
		}
		dst = append(append(dst, byte(len(s))), s...)
	}
	return dst
}

func decodeMarket(r *reader, m *clob.MarketConfig) {
	r.bytes(m.ID[:])
	m.Kind = clob.MarketKind(r.U8())
	r.bytes(m.Base[:])
	r.bytes(m.Quote[:])
	m.IntervalUs = int64(r.U64())
	r.U256Compact(&m.TickPrecision)
	r.U256Compact(&m.LotSize)
	r.U256Compact(&m.MakerFee)
	r.U256Compact(&m.TakerFee)
	for _, s := range [3]*string{&m.Name, &m.BaseSymbol, &m.QuoteSymbol} {
		*s = string(r.Take(int(r.U8())))
	}
}

// appendPerpParams encodes a perp market's parameters.
func appendPerpParams(dst []byte, p *clob.PerpParams) []byte {
	dst = binary.BigEndian.AppendUint32(dst, p.MaxLeverage)
	for _, v := range [...]*uint256.Int{&p.InterestRate, &p.MaxFundingRate, &p.MaxPremium, &p.MarkClamp, &p.OraclePrice} {
		dst = binread.AppendU256Compact(dst, v)
	}
	dst = binary.BigEndian.AppendUint32(dst, p.WalkBps)
	return binary.BigEndian.AppendUint64(dst, p.WalkSeed)
}

func decodePerpParams(r *reader, p *clob.PerpParams) {
	p.MaxLeverage = r.U32()
	for _, v := range [...]*uint256.Int{&p.InterestRate, &p.MaxFundingRate, &p.MaxPremium, &p.MarkClamp, &p.OraclePrice} {
		r.U256Compact(v)
	}
	p.WalkBps = r.U32()
	p.WalkSeed = r.U64()
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
	dst = binread.AppendU256Compact(dst, &tx.Value)
	dst = binary.BigEndian.AppendUint64(dst, tx.Gas)
	dst = binread.AppendU256Compact(dst, &tx.GasTipCap)
	dst = binread.AppendU256Compact(dst, &tx.GasFeeCap)
	dst = binread.AppendU256Compact(dst, &tx.V)
	dst = binread.AppendU256Compact(dst, &tx.R)
	dst = binread.AppendU256Compact(dst, &tx.S)
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
	r := newReader(b)
	switch k := r.U8(); k {
	case kindTx, kindTxStaged:
		in.Kind, in.Staged = core.InputTx, k == kindTxStaged
		in.TimeUs = int64(r.U64())
		decodeTx(&r, &in.Tx)
	case kindTick:
		in.Kind = core.InputTick
		in.TimeUs = int64(r.U64())
	case kindMarket:
		in.Kind = core.InputCreateMarket
		decodeMarket(&r, &in.Market)
		if in.Market.Kind == clob.Perp {
			return in, ErrCorrupt // a perp market is always kindPerpMarket
		}
	case kindPerpMarket:
		in.Kind = core.InputCreateMarket
		decodeMarket(&r, &in.Market)
		decodePerpParams(&r, &in.Market.Perp)
		if in.Market.Kind != clob.Perp {
			return in, ErrCorrupt
		}
	case kindSetOracle:
		in.Kind = core.InputSetOracle
		r.bytes(in.Book[:])
		r.U256Compact(&in.Price)
	case kindDeposit:
		in.Kind = core.InputDeposit
		r.bytes(in.DepositID[:])
		r.bytes(in.Token[:])
		r.bytes(in.To[:])
		r.U256Compact(&in.Amount)
	case kindBaseFee:
		in.Kind = core.InputSetBaseFee
		r.U256Compact(&in.BaseFee)
	case kindLock:
		in.Kind = core.InputLockAccount
		r.bytes(in.To[:])
	case kindSetBalance:
		in.Kind = core.InputSetBalance
		r.bytes(in.To[:])
		r.U256Compact(&in.Amount)
	case kindSetNonce:
		in.Kind = core.InputSetNonce
		r.bytes(in.To[:])
		in.Nonce = r.U64()
	case kindClock:
		in.Kind = core.InputClockOffset
		in.TimeUs = int64(r.U64())
	case kindMoveOracle:
		in.Kind = core.InputMoveOracle
		r.bytes(in.Book[:])
		in.Bps = int32(r.U32())
		in.TimeUs = int64(r.U64())
	default:
		return in, ErrCorrupt
	}
	return in, r.end()
}

// decodeTx decodes appendTx's bytes; r is bad if they are not well formed.
func decodeTx(r *reader, tx *core.Tx) {
	r.bytes(tx.Hash[:])
	tx.Type = r.U8()
	tx.ChainID = r.U64()
	tx.Nonce = r.U64()
	r.bytes(tx.From[:])
	hasTo := r.U8()
	r.bytes(tx.To[:])
	r.U256Compact(&tx.Value)
	tx.Gas = r.U64()
	r.U256Compact(&tx.GasTipCap)
	r.U256Compact(&tx.GasFeeCap)
	r.U256Compact(&tx.V)
	r.U256Compact(&tx.R)
	r.U256Compact(&tx.S)
	if hasTo > 1 {
		r.Fail("hasTo %d", hasTo)
	}
	tx.HasTo = hasTo == 1
	if n := r.U32(); n > MaxDataBytes {
		r.Fail("%d bytes of data", n)
	} else if n > 0 {
		tx.Data = append([]byte(nil), r.Take(int(n))...)
	}
	decodeAccessList(r, tx)
}

func decodeAccessList(r *reader, tx *core.Tx) {
	count := r.U32()
	if uint64(count)*24 > uint64(r.Left()) {
		r.Fail("%d access tuples", count)
		return
	}
	for range count {
		var t core.AccessTuple
		r.bytes(t.Address[:])
		keys := r.U32()
		if uint64(keys)*32 > uint64(r.Left()) {
			r.Fail("%d storage keys", keys)
			return
		}
		t.StorageKeys = make([]core.Hash, keys)
		for i := range t.StorageKeys {
			r.bytes(t.StorageKeys[i][:])
		}
		tx.AccessList = append(tx.AccessList, t)
	}
}

// reader reads persist's encodings: binread's fields (u256s in the compact
// form, binread.AppendU256Compact).
type reader struct{ binread.Reader }

func newReader(b []byte) reader { return reader{binread.Reader{B: b}} }

func (r *reader) bytes(dst []byte) { copy(dst, r.Take(len(dst))) }

// rest returns the bytes not read yet (aliasing the input).
func (r *reader) rest() []byte { return r.B[r.Off:] }

// end reports ErrCorrupt unless every read fitted and nothing is left.
func (r *reader) end() error {
	if r.Err != nil || r.Left() != 0 {
		return ErrCorrupt
	}
	return nil
}
