// A leader and a follower (docs/scaling.md) as ethers 6 and viem 2 users
// meet them, with each library's defaults: writes to the leader, reads,
// receipts and a head subscription from the follower, and a write sent to
// the follower refused with the leader's URL in what each library shows.
// The step protocol of flow.mjs (TestFollowerWithEthersAndViem).
//
//   LEDGERD_HTTP=<leader> LEDGERD_FOLLOWER_HTTP=<follower> LEDGERD_FOLLOWER_WS=<follower ws> node follower.mjs
import { JsonRpcProvider, Wallet, parseEther } from 'ethers'
import { createPublicClient, createWalletClient, defineChain, http, webSocket } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

import { step, done, check, poll } from './guide-steps.mjs'
import { HTTP, KEY1, KEY2 } from './flow.mjs'

const FOLLOWER = process.env.LEDGERD_FOLLOWER_HTTP
const FOLLOWER_WS = process.env.LEDGERD_FOLLOWER_WS
const chain = defineChain({
  id: 1293, name: 'ledgerd', nativeCurrency: { name: 'USD', symbol: 'USD', decimals: 18 },
  rpcUrls: { default: { http: [HTTP] } },
})
const leader = new JsonRpcProvider(HTTP, 1293, { staticNetwork: true })
const follower = new JsonRpcProvider(FOLLOWER, 1293, { staticNetwork: true })
const viemFollower = createPublicClient({ chain, transport: http(FOLLOWER) })
const viemLeader = createPublicClient({ chain, transport: http(HTTP) })
const to = '0x00000000000000000000000000000000000000ee'

// eq checks that the follower's value is the leader's.
function eq(got, want, what) {
  check(String(got) === String(want), `${what}: the follower ${got}, the leader ${want}`)
}

let hash
await step('ethers: transfer on the leader', async () => {
  const tx = await new Wallet(KEY1, leader).sendTransaction({ to, value: parseEther('0.25') })
  const receipt = await tx.wait()
  check(receipt.status === 1, `status ${receipt.status}`)
  hash = tx.hash
})

await step('ethers: the follower serves its receipt and balance as the leader', async () => {
  const want = await leader.getTransactionReceipt(hash)
  const got = await poll(async () => (await follower.getTransactionReceipt(hash)) ?? undefined, 10_000, () => 'no receipt on the follower')
  eq(got.blockHash, want.blockHash, 'blockHash')
  eq(got.status, want.status, 'status')
  eq(got.index, want.index, 'index')
  eq((await follower.getBalance(to)).toString(), (await leader.getBalance(to)).toString(), 'balance')
  const addr = new Wallet(KEY1).address
  eq(await follower.getTransactionCount(addr), await leader.getTransactionCount(addr), 'nonce')
  check((await follower.getBlockNumber()) > 0, 'block number')
})

await step('ethers: a write sent to the follower names the leader', async () => {
  const addr = new Wallet(KEY2).address
  const nonce = await follower.getTransactionCount(addr)
  let err
  try {
    await new Wallet(KEY2, follower).sendTransaction({ to, value: 1n, nonce, gasLimit: 21000n })
  } catch (e) {
    err = e
  }
  check(err, 'the follower took the write')
  const text = JSON.stringify(err.info ?? err.error ?? {}) + String(err.message)
  check(text.includes(`send writes to the leader at ${HTTP}`), `ethers shows: ${text.slice(0, 300)}`)
})

await step('viem: a transfer on the leader, its receipt from the follower', async () => {
  const account = privateKeyToAccount(KEY2)
  const wallet = createWalletClient({ chain, transport: http(HTTP) })
  const h = await wallet.sendTransaction({ account, to, value: 1n })
  const want = await viemLeader.waitForTransactionReceipt({ hash: h })
  const got = await poll(async () => {
    try { return await viemFollower.getTransactionReceipt({ hash: h }) } catch { return undefined }
  }, 10_000, () => 'no receipt on the follower')
  eq(got.blockHash, want.blockHash, 'blockHash')
  eq(got.status, want.status, 'status')
})

await step('viem: a write sent to the follower names the leader', async () => {
  const wallet = createWalletClient({ chain, transport: http(FOLLOWER) })
  let err
  try {
    await wallet.sendTransaction({ account: privateKeyToAccount(KEY2), to, value: 1n })
  } catch (e) {
    err = e
  }
  check(err, 'the follower took the write')
  const text = `${err.details ?? ''} ${err.message}`
  check(text.includes(`send writes to the leader at ${HTTP}`), `viem shows: ${text.slice(0, 300)}`)
})

await step('viem: new heads from the follower over WebSocket', async () => {
  const ws = createPublicClient({ chain, transport: webSocket(FOLLOWER_WS) })
  const heads = []
  await new Promise((resolve, reject) => {
    const unwatch = ws.watchBlockNumber({
      emitOnBegin: false,
      onBlockNumber: (n) => { heads.push(n); if (heads.length === 2) { unwatch(); resolve() } },
      onError: reject,
    })
  })
  check(heads[1] > heads[0], `heads ${heads}`)
  await ws.transport.getRpcClient().then((c) => c.close())
}, 15_000)

done()
