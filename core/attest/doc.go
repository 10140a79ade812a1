// Package attest simulates the validator committee whose attestations make
// receipts final, and verifies those attestations.
//
// # Model
//
// Signing every receipt would cap throughput at a few thousand receipts per
// second per validator (one ECDSA signature costs tens of microseconds). So
// the committee signs the Merkle root of a small batch of receipt leaves
// instead: one signature per validator per batch. Each receipt then carries
// the attestations of its batch plus its own Merkle proof, and a verifier
// checks the proof against the root and the signatures against the committee.
//
// The package is pure and deterministic: no goroutines, no clock, no I/O.
// Time arrives as an argument (microseconds), keys are derived from a seed,
// and signatures are RFC 6979 deterministic, so the same inputs give the same
// bytes on every run.
//
// # Committee
//
// NewCommittee(seed, n, epoch) derives validator i's private key as
//
//	k = keccak256(seed || uint32_be(i)); while k is not in [1, N-1]: k = keccak256(k)
//
// where N is the secp256k1 group order. Members lists the validators'
// Ethereum addresses in key order (i = 0, 1, ...).
//
// With n validators the committee tolerates f = (n-1)/3 Byzantine members
// (the classic bound n >= 3f+1) and needs a quorum of n-f attestations. Two
// quorums of n-f overlap in at least n-2f >= f+1 members, so every pair of
// quorums shares at least one honest validator. The default committee of 4
// has f = 1 and quorum 3.
//
// # Merkle tree
//
// A batch of 1..MaxBatchLeaves leaves is padded to a power of two, width
// 2^depth, and hashed into a binary tree. Nodes are numbered by generalized
// index (gi): the root is 1, the children of gi are 2gi and 2gi+1, so leaf i
// sits at gi = 2^depth + i. Example with 3 leaves (depth 2, one padding slot):
//
//	                      gi 1: root = H(0x01 || n2 || n3)
//	                   /                                   \
//	      gi 2: H(0x01 || n4 || n5)             gi 3: H(0x01 || n6 || n7)
//	        /                  \                  /                  \
//	gi 4: H(0x00||L0)  gi 5: H(0x00||L1)  gi 6: H(0x00||L2)  gi 7: EMPTY
//
// H is keccak256 and EMPTY is 32 zero bytes. A proof for leaf i is the list of
// sibling nodes from the bottom up (gi 5, then gi 3, for leaf 0 above); the
// verifier reads at each level whether the running node is a left (gi even)
// or right (gi odd) child from the bits of gi, and the path length must equal
// depth = bitlen(gi) - 1.
//
// Why the domain bytes: without them an inner node, which is the hash of 64
// bytes, could be presented as a leaf of a shorter tree (a second preimage),
// and a proof of one leaf could be reshaped into a proof of a value that was
// never in the batch. With 0x00 for leaves and 0x01 for inner nodes the two
// kinds of preimage can never coincide. EMPTY is not the image of any leaf
// (that would need a keccak256 preimage of zero), so no proof can place a
// leaf at a padding position. A subtree made only of padding hashes to a
// per-level constant computed once at start-up, which keeps the build cost
// proportional to the leaf count rather than to 2^depth.
//
// # Signed digest
//
// Every validator signs Digest(epoch, seq, ts, root) = keccak256 of:
//
//	+------------------------------------------+--------+--------+---------+----------+
//	| domain tag "ledgervenue/attest/batch/v1" | epoch  | seq    | ts (µs) | root     |
//	| 27 bytes ASCII                           | u64 BE | u64 BE | i64 BE  | 32 bytes |
//	+------------------------------------------+--------+--------+---------+----------+
//
// The tag keeps these signatures apart from anything else a key could sign:
// its first byte is 'l' (0x6c), whereas a signed Ethereum transaction hashes
// an RLP list (first byte >= 0xc0) or a typed envelope (first byte is the
// transaction type, 0x01..0x04 today), and EIP-191/712 messages start with
// 0x19. A signature is 65 bytes r || s || v with v in {27, 28}.
//
// AttestBy signs with a subset of the members (the node leaves out silent
// validators): a batch then carries fewer signatures, and verifies as long
// as a quorum signed.
//
// Verify counts validators, not signature bytes: a second signature from the
// same validator (including a malleated copy with s' = N - s) is rejected as
// a duplicate and can never add to the quorum.
//
// # Receipt leaf
//
// ReceiptCommitment.Leaf is keccak256 of the canonical encoding written by
// AppendReceiptCommitment. All integers are big-endian; every variable-length
// part is preceded by its count, so the encoding is prefix-free and can be
// parsed back without ambiguity: two different commitments never encode to
// the same bytes, and changing any field changes the leaf.
//
//	header, 125 bytes:
//	+---------+--------+---------+-------------------+-------------------+------+------+------------+
//	| tx_hash | status | gas_used| cumulative_gas    | effective_gas     | from | to   | logs_count |
//	| 32      | 1      | u64 8   | u64 8             | price u256 32     | 20   | 20   | u32 4      |
//	+---------+--------+---------+-------------------+-------------------+------+------+------------+
//	then logs_count times:
//	+---------+--------------+------------------------+-----------+-----------+
//	| address | topics_count | topics                 | data_size | data      |
//	| 20      | u8 1 (<= 4)  | 32 * topics_count      | u32 4     | data_size |
//	+---------+--------------+------------------------+-----------+-----------+
//
// # Limits
//
//   - MaxBatchLeaves (1024) leaves per batch, hence MaxBatchDepth (10) proof
//     hashes; Verify rejects deeper proofs before hashing anything.
//   - MaxCommitteeSize (256) validators; Verify rejects more attestations
//     than the committee has members before recovering any signature, so the
//     work per call is bounded by the committee size.
//   - MaxLogTopics (4) topics per log, as in the EVM (LOG0..LOG4).
//
// # Ownership and concurrency
//
// A Committee is owned by one goroutine (the sequencer): Attest reuses the
// committee's hashing scratch. A Batch is owned by the caller and is reused
// when passed back to Attest; Proof and Attestations return fresh slices
// that stay valid after the Batch is reused. Info, Verify, Digest and Leaf
// are safe for concurrent use: they borrow a hasher from a sync.Pool because
// they run on every event loop.
//
// # Invariants
//
//   - Members are distinct (checked by NewCommittee).
//   - A Batch's tree has 2^depth leaf slots with len(leaves) <= 2^depth <
//     2*len(leaves), and its node at generalized index 1 is Root.
//   - Every attestation a Batch hands out verifies with Verify against the
//     committee's Info; the tests assert this for every leaf of batches of
//     1, 2, 3, 255, 256 and 1024 leaves.
package attest
