package attest

import (
	"encoding/binary"
	"math"
)

// MaxLogTopics is the EVM's limit on indexed topics per log (LOG0..LOG4).
const MaxLogTopics = 4

// ReceiptCommitment is what a receipt's leaf commits to.
type ReceiptCommitment struct {
	TxHash            [32]byte
	Status            uint8
	GasUsed           uint64
	CumulativeGasUsed uint64
	EffectiveGasPrice [32]byte // big-endian uint256
	From, To          [20]byte
	Logs              []LogCommitment
}

// LogCommitment is one log of a ReceiptCommitment.
type LogCommitment struct {
	Address [20]byte
	Topics  [][32]byte
	Data    []byte
}

// Leaf returns keccak256 of the canonical encoding of r (see doc.go and
// AppendReceiptCommitment). It does not allocate once the pooled scratch
// has grown to the receipt's size. Safe for concurrent use.
//
// REQUIRES: the same as AppendReceiptCommitment.
func (r *ReceiptCommitment) Leaf() [32]byte {
	h := getHasher()
	h.enc = AppendReceiptCommitment(h.enc[:0], r)
	leaf := h.sum(h.enc)
	putHasher(h)
	return leaf
}

// AppendReceiptCommitment appends the canonical encoding of r to dst and
// returns the extended slice. The layout is drawn in doc.go.
//
// REQUIRES: every log has at most MaxLogTopics topics; len(r.Logs) and every
// len(Data) fit in a uint32.
func AppendReceiptCommitment(dst []byte, r *ReceiptCommitment) []byte {
	if uint64(len(r.Logs)) > math.MaxUint32 {
		panic("BUG: attest.AppendReceiptCommitment: too many logs")
	}
	dst = append(dst, r.TxHash[:]...)
	dst = append(dst, r.Status)
	dst = binary.BigEndian.AppendUint64(dst, r.GasUsed)
	dst = binary.BigEndian.AppendUint64(dst, r.CumulativeGasUsed)
	dst = append(dst, r.EffectiveGasPrice[:]...)
	dst = append(dst, r.From[:]...)
	dst = append(dst, r.To[:]...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.Logs)))
	for i := range r.Logs {
		dst = appendLogCommitment(dst, &r.Logs[i])
	}
	return dst
}

func appendLogCommitment(dst []byte, l *LogCommitment) []byte {
	if len(l.Topics) > MaxLogTopics {
		panic("BUG: attest.AppendReceiptCommitment: more than MaxLogTopics topics")
	}
	if uint64(len(l.Data)) > math.MaxUint32 {
		panic("BUG: attest.AppendReceiptCommitment: log data over 4 GiB")
	}
	dst = append(dst, l.Address[:]...)
	dst = append(dst, uint8(len(l.Topics)))
	for i := range l.Topics {
		dst = append(dst, l.Topics[i][:]...)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(l.Data)))
	return append(dst, l.Data...)
}
