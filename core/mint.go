package core

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/binread"
	"github.com/ledgervenue/node/core/clob"
)

// The Mint application, the dev faucet (docs/faucet.md). A transaction to
// MintAddress calling
//
//	mint(address to, (address token, uint256 amount)[] tokens, bool depositToClob)
//
// credits each listed amount to `to` at once, when the genesis allows
// minting (Config.MintAllowed: ledgerd --dev). It is gas-exempt and its
// signer does not matter (the live SDK signs it with a throwaway key), only
// the recipient: each recipient gets at most MintsPerAccountHourMax mints
// per hour of the admission clock (Input.TimeUs / MintHourUs), and one hour
// serves at most MintRecipientsHourMax recipients. Everything else refuses
// it with RejectApp, the reason in Detail ("Mint validation failed: " on
// the wire), and changes nothing.
//
// The ledger keeps one balance per token and account, which is also the
// orderbook's (balanceOf): a mint with depositToClob lands where one
// without it does. The flag is decoded, checked and carried in the Mint
// logs.

// MintAddress is the Mint application's address (the live network's).
var MintAddress = Address{17: 0x0f, 18: 0xff, 19: 0xff}

// Bounds of the Mint application (docs/limits.md).
const (
	// MintTokensMax bounds the (token, amount) entries of one mint.
	MintTokensMax = 16
	// MintsPerAccountHourMax bounds the mints one recipient gets per hour.
	MintsPerAccountHourMax = 10
	// MintRecipientsHourMax bounds the recipients one hour serves: the
	// ledger's per-hour counters, the faucet's only state.
	MintRecipientsHourMax = 4096
	// MintHourUs is the faucet's window: the admission time's hour.
	MintHourUs = 3_600_000_000
)

// MintAmountMax bounds each amount of a mint: a million tokens (18
// decimals).
var MintAmountMax = uint256.MustFromDecimal("1000000000000000000000000")

// MintDisabled is the refusal of every mint when the genesis does not allow
// minting (the live SDK's example reason).
const MintDisabled = "Minting is disabled"

// Mint refusal reasons without a parameter (docs/faucet.md).
const (
	mintMalformed  = "malformed call, want mint(address,(address,uint256)[],bool)"
	mintValue      = "value must be zero"
	mintZeroTo     = "zero recipient"
	mintNoTokens   = "no tokens"
	mintZeroAmount = "zero amount"
)

// mintSelector is keccak256("mint(address,(address,uint256)[],bool)")[:4].
var mintSelector = Selector("mint(address,(address,uint256)[],bool)")

// mintTopic is keccak256("Mint(address,address,uint256,bool)"): the log a
// mint emits per entry, from MintAddress, with token and recipient indexed
// and data amount ‖ depositToClob.
var mintTopic = eventTopic("Mint(address,address,uint256,bool)")

// MintTopic returns the topic of the log a mint emits per entry.
func MintTopic() Hash { return mintTopic }

// MintEntry is one (token, amount) of a mint.
type MintEntry struct {
	Token  Address
	Amount uint256.Int
}

// MintCall is a decoded mint call.
type MintCall struct {
	To            Address
	Tokens        []MintEntry
	DepositToClob bool
}

// mints is the Mint application's part of the ledger.
// Invariants: counts holds the recipients of hour (each 1 to
// MintsPerAccountHourMax mints), at most MintRecipientsHourMax of them.
type mints struct {
	allowed bool
	hour    int64
	counts  map[Address]uint32
	// last is the latest applied mint, reused: LastMint.
	last MintCall
}

// LastMint returns the mint the latest applied input made (valid until the
// next input; meaningful only right after a mint's record).
func (l *Ledger) LastMint() *MintCall { return &l.mint.last }

// applyMint applies a transaction to the Mint application that passed the
// protocol checks: the faucet's checks, then the nonce is spent and every
// entry credited. It pays no fee.
func (l *Ledger) applyMint(tx *Tx, timeUs int64) (*TxRecord, Reject) {
	if reason := l.checkMint(tx, timeUs); reason != "" {
		return nil, Reject{Code: RejectApp, App: MintAddress, Detail: reason}
	}
	l.seq++
	l.accept(l.account(tx.From), tx)
	m := &l.mint
	if hour := timeUs / MintHourUs; hour != m.hour || m.counts == nil {
		m.hour, m.counts = hour, make(map[Address]uint32)
	}
	m.counts[m.last.To]++
	logs := make([]Log, len(m.last.Tokens))
	var toTopic Hash
	copy(toTopic[12:], m.last.To[:])
	for i := range m.last.Tokens {
		e := &m.last.Tokens[i]
		l.credit(e.Token, m.last.To, &e.Amount)
		var tokenTopic Hash
		copy(tokenTopic[12:], e.Token[:])
		data := binread.AppendU256(make([]byte, 0, 64), &e.Amount)
		data = append(data, make([]byte, 32)...)
		if m.last.DepositToClob {
			data[63] = 1
		}
		logs[i] = Log{Address: MintAddress, Topics: []Hash{mintTopic, tokenTopic, toTopic}, Data: data}
	}
	return &TxRecord{Kind: RecordTx, Seq: l.seq, Tx: *tx, Status: 1, GasUsed: TxGas, Logs: logs}, Reject{}
}

// checkMint decodes the call into l.mint.last and applies the faucet's
// checks in the rule book's order; a non-empty reason refuses it.
func (l *Ledger) checkMint(tx *Tx, timeUs int64) string {
	if !l.mint.allowed {
		return MintDisabled
	}
	if reason := decodeMint(tx.Data, &l.mint.last); reason != "" {
		return reason
	}
	c := &l.mint.last
	switch {
	case !tx.Value.IsZero():
		return mintValue
	case c.To == (Address{}):
		return mintZeroTo
	case len(c.Tokens) == 0:
		return mintNoTokens
	}
	for i := range c.Tokens {
		e := &c.Tokens[i]
		switch {
		case !l.mintable(e.Token):
			return "token not mintable 0x" + hex.EncodeToString(e.Token[:])
		case e.Amount.IsZero():
			return mintZeroAmount
		case e.Amount.Gt(MintAmountMax):
			return "amount above maximum " + MintAmountMax.Dec()
		}
	}
	var count uint32
	recipients := 0
	if m := &l.mint; m.hour == timeUs/MintHourUs {
		count, recipients = m.counts[c.To], len(m.counts)
	}
	switch {
	case count >= MintsPerAccountHourMax:
		return "too many mints to this account this hour (max " + strconv.Itoa(MintsPerAccountHourMax) + ")"
	case count == 0 && recipients >= MintRecipientsHourMax:
		return "too many mint recipients this hour (max " + strconv.Itoa(MintRecipientsHourMax) + ")"
	}
	return ""
}

// mintCallSizeMin is the selector, the three head words and the array's
// length word; each entry adds two words.
const mintCallSizeMin = 4 + 4*32

// decodeMint decodes mint call data into c (its Tokens reused) in the
// canonical ABI encoding only: the array right after the head, no trailing
// bytes, clean address and bool words, at most MintTokensMax entries.
func decodeMint(data []byte, c *MintCall) string {
	if len(data) < 4 {
		return mintMalformed
	}
	if [4]byte(data[:4]) != mintSelector {
		return "unknown function selector 0x" + hex.EncodeToString(data[:4])
	}
	if len(data) < mintCallSizeMin {
		return mintMalformed
	}
	args := data[4:]
	var offset, n uint256.Int
	offset.SetBytes32(args[32:64])
	n.SetBytes32(args[96:128])
	if !addressWord(args[:32], &c.To) || !offset.Eq(uint256.NewInt(3*32)) || !allZero(args[64:95]) || args[95] > 1 ||
		!n.IsUint64() {
		return mintMalformed
	}
	if n.Uint64() > MintTokensMax {
		return "too many tokens (max " + strconv.Itoa(MintTokensMax) + ")"
	}
	entries := int(n.Uint64())
	if len(data) != mintCallSizeMin+entries*64 {
		return mintMalformed
	}
	c.DepositToClob = args[95] == 1
	c.Tokens = c.Tokens[:0]
	for i := 0; i < entries; i++ {
		w := args[128+i*64:]
		var e MintEntry
		if !addressWord(w[:32], &e.Token) {
			return mintMalformed
		}
		e.Amount.SetBytes32(w[32:64])
		c.Tokens = append(c.Tokens, e)
	}
	return ""
}

// mintable reports whether the ledger knows token: the native token, a
// bridged token, one it ever issued (genesis, deposits) or a market's.
// Unknown tokens are refused so that a mint cannot make an account hold
// tokens nothing else on the ledger trades or bridges.
func (l *Ledger) mintable(token Address) bool {
	if token == NativeToken || l.wd.cfg.TokenFor(token) != nil || l.issued[token] != nil {
		return true
	}
	for _, id := range l.engine.AppendMarkets(nil) {
		if m, _ := l.engine.Market(id); m.Base == clob.Address(token) || m.Quote == clob.Address(token) {
			return true
		}
	}
	return false
}

// appendMints appends the faucet's state (snapshot.go):
//
//	| hour i64 | nRecipients u32 | (recipient 20 B | mints u32)* |   recipients ascending
func (l *Ledger) appendMints(dst []byte, scratch []Address) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(l.mint.hour))
	recipients := appendSortedKeys(scratch, l.mint.counts)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(recipients)))
	for _, a := range recipients {
		dst = binary.BigEndian.AppendUint32(append(dst, a[:]...), l.mint.counts[a])
	}
	return dst
}

// loadMints reads what appendMints wrote and checks the invariants of
// mints.
func (l *Ledger) loadMints(r *snapReader) {
	l.mint.hour = int64(r.U64())
	n := r.Count(20 + 4)
	if n > MintRecipientsHourMax {
		r.Fail("%d mint recipients, at most %d", n, MintRecipientsHourMax)
	}
	if r.Err != nil {
		return
	}
	l.mint.counts = make(map[Address]uint32, n)
	var prev Address
	for i := 0; i < n && r.Err == nil; i++ {
		a, count := r.addr(), r.U32()
		if i > 0 && bytes.Compare(prev[:], a[:]) >= 0 || count == 0 || count > MintsPerAccountHourMax {
			r.Fail("mint recipient %x (%d mints) after %x", a, count, prev)
		}
		prev = a
		l.mint.counts[a] = count
	}
}
