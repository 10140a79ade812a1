// A withdrawal to the bridged chain with viem 2: dev account (5) withdraws
// 5 USD of the native token, waits for its batch, then follows it over REST
// until the validators' claim proof is there.
//
//   npm install viem@2 && LEDGERD_RPC=http://127.0.0.1:8545 node withdraw-viem.mjs
import { createPublicClient, createWalletClient, defineChain, http, parseAbi, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const rpc = process.env.LEDGERD_RPC ?? 'http://127.0.0.1:8545'
const chain = defineChain({ id: 0x50d, name: 'ledgerd', nativeCurrency: { name: 'USD', symbol: 'USD', decimals: 18 },
  rpcUrls: { default: { http: [rpc] } } })
// Dev account (5) of `ledgerd --dev`: the standard test mnemonic's key.
const account = privateKeyToAccount('0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba')
const client = createPublicClient({ chain, transport: http() })
const wallet = createWalletClient({ account, chain, transport: http() })

const BRIDGE = '0x50d0000000000000000000000000000000000001'
const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
const abi = parseAbi(['function withdraw(address token, address recipient, uint256 amount, uint128 deadline)'])

// 18 decimals on the ledger, a whole number of the bridged chain's units.
const amount = parseEther('5')
const deadline = (BigInt(Date.now()) * 1000n / 500_000n + 4n) * 500_000n // µs, on the 500 ms grid

// A withdrawal pays no gas; it is executed in the next withdrawal batch.
const hash = await wallet.writeContract({ address: BRIDGE, abi, functionName: 'withdraw',
  args: [NATIVE, account.address, amount, deadline] })
const receipt = await client.waitForTransactionReceipt({ hash })
console.log(`withdrawal ${hash} in batch ${receipt.blockNumber}`)

for (let tries = 0; tries < 60; tries++) {
  const res = await fetch(`${rpc}/v1/bridge/withdrawals/by-id/${hash}`)
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
