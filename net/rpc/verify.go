package rpc

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ledgervenue/node/core/attest"
)

// wireReceipt is the part of an eth_getTransactionReceipt answer that the
// attestations vouch for.
type wireReceipt struct {
	TransactionHash   common.Hash     `json:"transactionHash"`
	Status            hexutil.Uint64  `json:"status"`
	GasUsed           hexutil.Uint64  `json:"gasUsed"`
	CumulativeGasUsed hexutil.Uint64  `json:"cumulativeGasUsed"`
	EffectiveGasPrice *hexutil.Big    `json:"effectiveGasPrice"`
	From              common.Address  `json:"from"`
	To                *common.Address `json:"to"`
	Logs              []struct {
		Address common.Address `json:"address"`
		Topics  []common.Hash  `json:"topics"`
		Data    hexutil.Bytes  `json:"data"`
	} `json:"logs"`
	Meta struct {
		Attestations []struct {
			Validator common.Address `json:"validator_address"`
			Seq       uint64         `json:"sequence_number"`
			Index     uint32         `json:"batch_index"`
			Timestamp int64          `json:"timestamp"`
			Signature hexutil.Bytes  `json:"signature"`
		} `json:"attestations"`
		Epoch uint64      `json:"committee_epoch"`
		Root  common.Hash `json:"receipt_root"`
		Proof struct {
			GeneralizedIndex string        `json:"generalized_index"`
			Path             []common.Hash `json:"path"`
		} `json:"proof"`
	} `json:"svc_metadata"`
}

type wireCommittee struct {
	Quorum   int              `json:"quorum_size"`
	Replicas []common.Address `json:"replicas"`
}

// VerifyReceiptJSON checks a receipt exactly as a client receives it from
// eth_getTransactionReceipt against the committee svc_getCommittee returns:
// the receipt's fields hash to a leaf that the Merkle proof places under
// receipt_root, and a quorum of committee members signed that root. Any
// change to a committed field, the proof or a signature makes it fail. The
// commitment is rebuilt the way the node builds it (node.Commitment).
func VerifyReceiptJSON(receipt, committee []byte) error {
	var r wireReceipt
	if err := json.Unmarshal(receipt, &r); err != nil {
		return fmt.Errorf("cannot decode receipt: %w", err)
	}
	var c wireCommittee
	if err := json.Unmarshal(committee, &c); err != nil {
		return fmt.Errorf("cannot decode committee: %w", err)
	}
	info := attest.Info{Epoch: r.Meta.Epoch, Quorum: c.Quorum}
	for _, m := range c.Replicas {
		info.Members = append(info.Members, m)
	}
	gi, err := strconv.ParseUint(r.Meta.Proof.GeneralizedIndex, 10, 64)
	if err != nil {
		return fmt.Errorf("bad generalized_index %q: %w", r.Meta.Proof.GeneralizedIndex, err)
	}
	proof := attest.Proof{GeneralizedIndex: gi}
	for _, h := range r.Meta.Proof.Path {
		proof.Path = append(proof.Path, h)
	}
	atts := make([]attest.Attestation, 0, len(r.Meta.Attestations))
	for _, a := range r.Meta.Attestations {
		if len(a.Signature) != 65 {
			return fmt.Errorf("attestation by %s: signature of %d bytes", a.Validator, len(a.Signature))
		}
		atts = append(atts, attest.Attestation{Validator: a.Validator, Seq: a.Seq, BatchIndex: a.Index, Timestamp: a.Timestamp, Signature: [65]byte(a.Signature)})
	}
	if r.EffectiveGasPrice != nil && r.EffectiveGasPrice.ToInt().BitLen() > 256 {
		return fmt.Errorf("effectiveGasPrice exceeds 256 bits")
	}
	return attest.Verify(info, r.commitment().Leaf(), proof, r.Meta.Root, atts)
}

func (r *wireReceipt) commitment() *attest.ReceiptCommitment {
	c := &attest.ReceiptCommitment{
		TxHash: r.TransactionHash, Status: uint8(r.Status), GasUsed: uint64(r.GasUsed),
		CumulativeGasUsed: uint64(r.CumulativeGasUsed), From: r.From,
	}
	if r.EffectiveGasPrice != nil {
		(*r.EffectiveGasPrice).ToInt().FillBytes(c.EffectiveGasPrice[:])
	}
	if r.To != nil {
		c.To = *r.To
	}
	for _, l := range r.Logs {
		lc := attest.LogCommitment{Address: l.Address, Data: l.Data}
		for _, t := range l.Topics {
			lc.Topics = append(lc.Topics, t)
		}
		c.Logs = append(c.Logs, lc)
	}
	return c
}
