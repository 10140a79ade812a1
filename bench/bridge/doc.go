// Package bridge tests the bridge against a real bridged chain
// (docs/bridge.md §6): anvil, with our own bridge contract (sol/Bridge.sol)
// and test ERC-20s (sol/TestToken.sol) compiled by solc at test time. Both
// tools are npm packages pinned in npm/package.json; `make bridge-tools`
// (a prerequisite of make test and make e2e-bridge) installs them into
// npm/node_modules, and nothing else is fetched.
//
// Each test starts its own anvil on a free loopback port (killed when the
// test ends) and deploys from dev account 0 in the order
// node.DevBridgeConfig assumes: the bridge at nonce 0, then the tokens for
// the native token ("USD", 6 decimals), WETH (18) and WBTC (8) at nonces 1,
// 2 and 3, so that a ledgerd started with --l1 and no other flag matches.
// The bridge's committee is ledgerd's default one (attest.NewCommittee with
// the default seed and size).
//
//   - TestContractAgreesWithClaim: proofs signed with the committee's keys
//     pay on the contract exactly when core/claim.Verify accepts them, and
//     the contract reverts with the error matching Verify's otherwise
//     (tampered amount, recipient or signature, a duplicated signer, n − f − 1
//     signatures, ...); a second claim of a claim hash reverts.
//   - TestDepositCreditsTheLedger: ledgerd --l1 refuses a chain without the
//     bridge; deposits on anvil are credited on the ledger in 18 decimals,
//     once, across a restart that rescans the chain.
//   - TestBridgeLoop (make e2e-bridge): deposit on anvil, trade on the
//     ledger, withdraw there, wait for the claim proof over REST, claim on
//     anvil, and see a second claim refused.
//
// Without npm/node_modules the tests fail with what to run; -short skips
// them.
package bridge
