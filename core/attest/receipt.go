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
	// The encoding is hashed as it is written, a few KB at a time: a
	// tick's receipt carries every event of the tick (megabytes), which
	// the scratch would otherwise grow to, and drop, at every tick.
	h.st.Reset()
	h.enc = appendReceiptHead(h.enc[:0], r)
	for i := range r.Logs {
		if len(h.enc) >= leafChunk {
			h.st.Write(h.enc)
			h.enc = h.enc[:0]
		}
		h.enc = appendLogCommitment(h.enc, &r.Logs[i])
	}
	h.st.Write(h.enc)
	h.st.Read(h.out[:])
	leaf := h.out
	putHasher(h)
	return leaf
}

// leafChunk is how much of a receipt's encoding Leaf hashes at a time.
const leafChunk = 4 << 10

// AppendReceiptCommitment appends the canonical encoding of r to dst and
// returns the extended slice. The layout is drawn in doc.go.
//
// REQUIRES: every log has at most MaxLogTopics topics; len(r.Logs) and every
// len(Data) fit in a uint32.
func AppendReceiptCommitment(dst []byte, r *ReceiptCommitment) []byte {
	dst = appendReceiptHead(dst, r)
	for i := range r.Logs {
		dst = appendLogCommitment(dst, &r.Logs[i])
	}
	return dst
}

// appendReceiptHead appends what comes before r's logs in its encoding.
func appendReceiptHead(dst []byte, r *ReceiptCommitment) []byte {
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
	return binary.BigEndian.AppendUint32(dst, uint32(len(r.Logs)))
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
