package abi

import (
	"encoding/binary"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/secp"
)

// EIP-712 pieces of the delegation certificate. The domain has no
// verifyingContract and no salt: it is exactly what the live network's
// signers (ethers signTypedData, alloy eip712_domain!) produce for
// {name: "pod delegation", version: "1", chainId}.
const (
	delegationDomainName    = "pod delegation"
	delegationDomainVersion = "1"
	eip712DomainType        = "EIP712Domain(string name,string version,uint256 chainId)"
	delegationAuthType      = "DelegationAuth(address delegate,uint64 validUntil)"
)

var (
	eip712DomainTypeHash   = crypto.Keccak256Hash([]byte(eip712DomainType))
	delegationAuthTypeHash = crypto.Keccak256Hash([]byte(delegationAuthType))
	delegationNameHash     = crypto.Keccak256Hash([]byte(delegationDomainName))
	delegationVersionHash  = crypto.Keccak256Hash([]byte(delegationDomainVersion))

	// secp256k1HalfN is ⌊n/2⌋, the largest s accepted (EIP-2 low-s).
	secp256k1N     = uint256.MustFromHex("0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
	secp256k1HalfN = new(uint256.Int).Rsh(secp256k1N, 1)
)

// DelegationDigest returns the EIP-712 digest the master signs to let
// delegate trade for it until validUntil (microseconds):
//
//	keccak256(0x19 0x01 ‖ domainSeparator(chainID) ‖ hashStruct(DelegationAuth{delegate, validUntil}))
func DelegationDigest(chainID uint64, delegate clob.Address, validUntil uint64) [32]byte {
	// domainSeparator = keccak256(typeHash ‖ keccak256(name) ‖ keccak256(version) ‖ uint256(chainId))
	var domain [4 * wordSize]byte
	copy(domain[0:], eip712DomainTypeHash[:])
	copy(domain[wordSize:], delegationNameHash[:])
	copy(domain[2*wordSize:], delegationVersionHash[:])
	binary.BigEndian.PutUint64(domain[4*wordSize-8:], chainID)

	// hashStruct = keccak256(typeHash ‖ uint256(delegate) ‖ uint256(validUntil))
	var auth [3 * wordSize]byte
	copy(auth[0:], delegationAuthTypeHash[:])
	copy(auth[2*wordSize-len(delegate):], delegate[:])
	binary.BigEndian.PutUint64(auth[3*wordSize-8:], validUntil)

	var msg [2 + 2*wordSize]byte
	msg[0], msg[1] = 0x19, 0x01
	domainSeparator := crypto.Keccak256Hash(domain[:])
	structHash := crypto.Keccak256Hash(auth[:])
	copy(msg[2:], domainSeparator[:])
	copy(msg[2+wordSize:], structHash[:])
	return crypto.Keccak256Hash(msg[:])
}

// verifyDelegation reports whether sig is master's signature of the
// certificate DelegationAuth{delegate, validUntil} on chainID.
//
// sig is r ‖ s ‖ v with v ∈ {27, 28} (what eth_signTypedData_v4, ethers and
// alloy produce) or v ∈ {0, 1} (go-ethereum's crypto.Sign). r must be in
// [1, n), s in [1, n/2] (EIP-2: the high-s twin of a signature is refused,
// so a certificate has one encoding). The key is recovered with core/secp,
// the recovery ethtx.Sender uses (go-ethereum's crypto.Ecrecover without
// cgo was several times slower); both accept the same signatures.
func verifyDelegation(sig []byte, chainID uint64, delegate clob.Address, validUntil uint64, master clob.Address) bool {
	if len(sig) != signatureSize {
		return false
	}
	var r, s uint256.Int
	r.SetBytes32(sig[:wordSize])
	s.SetBytes32(sig[wordSize : 2*wordSize])
	if r.IsZero() || !r.Lt(secp256k1N) || s.IsZero() || s.Gt(secp256k1HalfN) {
		return false
	}
	recid := sig[signatureSize-1]
	switch recid {
	case 0, 1:
	case 27, 28:
		recid -= 27
	default:
		return false
	}
	digest := DelegationDigest(chainID, delegate, validUntil)
	var pub [64]byte
	if !secp.Recover(&pub, &digest, (*[32]byte)(sig[:wordSize]), (*[32]byte)(sig[wordSize:2*wordSize]), recid) {
		return false
	}
	recovered := crypto.Keccak256Hash(pub[:])
	var got clob.Address
	copy(got[:], recovered[wordSize-len(got):])
	return got == master
}
