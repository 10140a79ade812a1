// A withdrawal to the bridged chain with ethers 6: dev account (4) withdraws
// 5 USD of the native token, waits for its batch, then follows it over REST
// until the validators' claim proof is there.
//
//   npm install ethers@6 && LEDGERD_RPC=http://127.0.0.1:8545 node withdraw-ethers.mjs
import { ethers } from 'ethers'

const rpc = process.env.LEDGERD_RPC ?? 'http://127.0.0.1:8545'
const provider = new ethers.JsonRpcProvider(rpc)
// Dev account (4) of `ledgerd --dev`: the standard test mnemonic's key.
const wallet = new ethers.Wallet('0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a', provider)

const BRIDGE = '0x50d0000000000000000000000000000000000001'
const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
const bridge = new ethers.Contract(BRIDGE,
  ['function withdraw(address token, address recipient, uint256 amount, uint128 deadline)'], wallet)

// The native token is paid out with 6 decimals on the bridged chain, so the
// amount (18 decimals) must be a whole number of 10^12 (GET /v1/bridge/config).
const config = await (await fetch(`${rpc}/v1/bridge/config`)).json()
const rules = config.tokens.find((t) => t.svc_token.toLowerCase() === NATIVE.toLowerCase())
const amount = ethers.parseEther('5')
const deadline = (BigInt(Date.now()) * 1000n / 500_000n + 4n) * 500_000n // µs, on the 500 ms grid

// A withdrawal pays no gas; it is executed in the next withdrawal batch.
const tx = await bridge.withdraw(NATIVE, wallet.address, amount, deadline)
const receipt = await tx.wait()
console.log(`withdrawal ${tx.hash} in batch ${receipt.blockNumber}, ${rules.decimals}-decimal payout`)

for (let tries = 0; tries < 60; tries++) {
  const res = await fetch(`${rpc}/v1/bridge/withdrawals/by-id/${tx.hash}`)
  if (res.ok) {
    const w = await res.json()
    if (w.status === 'refused') throw new Error(`refused: ${w.withdrawal.error}`)
    if (w.proof) {
      // claim(l1_token, proof.amount, proof.to, proof.proof, proof.aux_tx_suffix) on the bridged chain.
      console.log(`claimable: ${BigInt(w.proof.amount)} units to ${w.proof.to}, ` +
        `claim hash ${w.proof.claim_hash}, ${(w.proof.proof.length - 1) / 65} signatures`)
      process.exit(0)
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 250))
}
console.error('the withdrawal did not become claimable within 15 s')
process.exit(1)
