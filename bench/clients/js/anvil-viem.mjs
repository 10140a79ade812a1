// viem 2's test client in anvil mode against `ledgerd --dev` (docs/anvil.md):
// setBalance, setNonce, increaseTime, setNextBlockTimestamp and mine, each
// checked through the public client. The step protocol of flow.mjs: one
// `STEP <name> ok <ms>` or `STEP <name> fail <message>` line per step.
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 node anvil-viem.mjs
import { createPublicClient, createTestClient, defineChain, http, parseEther } from 'viem'

import { HTTP, step, check } from './flow.mjs'

const ledgerd = defineChain({
  id: 1293,
  name: 'ledgerd',
  nativeCurrency: { name: 'USD', symbol: 'USD', decimals: 18 },
  rpcUrls: { default: { http: [HTTP] } },
})
const publicClient = createPublicClient({ chain: ledgerd, transport: http(HTTP) })
const testClient = createTestClient({ chain: ledgerd, mode: 'anvil', transport: http(HTTP) })

// An address no other flow uses.
const fresh = '0x00000000000000000000000000000000000a4b11'
const pastPerfectUs = async () => BigInt(await publicClient.request({ method: 'svc_pastPerfectTime' }))

await step('setBalance', async () => {
  await testClient.setBalance({ address: fresh, value: parseEther('7') })
  const balance = await publicClient.getBalance({ address: fresh })
  check(balance === parseEther('7'), `balance ${balance}, want 7e18`)
}, 10_000)

await step('setNonce', async () => {
  await testClient.setNonce({ address: fresh, nonce: 5 })
  const nonce = await publicClient.getTransactionCount({ address: fresh })
  check(nonce === 5, `nonce ${nonce}, want 5`)
}, 10_000)

await step('increaseTime', async () => {
  const before = await pastPerfectUs()
  await testClient.increaseTime({ seconds: 3600 })
  const after = await pastPerfectUs()
  check(after >= before + 3_600_000_000n, `past-perfect time moved ${after - before} µs, want at least an hour`)
}, 10_000)

await step('setNextBlockTimestamp', async () => {
  const target = (await pastPerfectUs()) / 1_000_000n + 60n
  await testClient.setNextBlockTimestamp({ timestamp: target })
  const now = await pastPerfectUs()
  check(now >= target * 1_000_000n, `past-perfect time ${now} µs, want at least ${target} s`)
  let refused
  try {
    await testClient.setNextBlockTimestamp({ timestamp: target - 10n })
  } catch (err) {
    refused = err
  }
  check(refused && /Timestamp error/.test(refused.details ?? refused.message),
    `a timestamp in the past: ${refused ? refused.message : 'accepted'}`)
}, 10_000)

await step('mine', async () => {
  const before = await publicClient.getBlockNumber({ cacheTime: 0 })
  const t0 = await pastPerfectUs()
  await testClient.mine({ blocks: 3 }) // anvil_mine [0x3, 0x0]: the next auction tick, three times
  const after = await publicClient.getBlockNumber({ cacheTime: 0 })
  const t1 = await pastPerfectUs()
  check(after > before && t1 > t0, `block ${before} → ${after}, time ${t0} → ${t1}: mine moved nothing`)
}, 10_000)
