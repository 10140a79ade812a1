// The live guide "Submit a batch order" (doc/api-reference/guides/
// submit-a-batch-order.md), ethers 6, as written: one submitBatch carrying a
// 5-lot long at 140 and its asset-grouped, reduce-only take-profit (160) and
// stop-loss (120). Then what the guide promises: the entry rests, and both
// triggers are armed with their type, as ob_getTriggers shows.
//
// Changed from the guide: the URL and PRIVATE_KEY (dev account 1). The
// market is the guide's NVDA-USD perp, id 0x…07, which TestLiveGuides creates
// (20x, oracle 150: between the stop-loss and the take-profit, so neither
// fires at once).
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 node guide-submit-a-batch-order.mjs
import { ethers } from 'ethers'
import { HTTP, KEY1, check, done, guideMarket, ordersOf, describe, poll, same, step } from './guide-steps.mjs'

const provider = new ethers.JsonRpcProvider(HTTP)
const wallet = new ethers.Wallet(KEY1, provider)

const ORDERBOOK = '0x50d0000000000000000000000000000000000002'
const abi = [
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
  'function submitTrigger(bytes32 orderbookId, int256 size, uint256 limitPrice, uint256 triggerPrice, uint8 triggerType, uint8 grouping, uint128 deadline, uint128 ttl, bool reduceOnly, bool ioc)',
  'function submitBatch(bytes[] inner)',
]
const orderbook = new ethers.Contract(ORDERBOOK, abi, wallet)

const nvdaPerpId = '0x0000000000000000000000000000000000000000000000000000000000000007' // NVDA-USD perp

await step('market', async () => {
  const m = await guideMarket((method, params) => provider.send(method, params), nvdaPerpId, 'perpetual', 20)
  const mark = BigInt(m.mark_price ?? 0)
  check(mark > ethers.parseEther('120') && mark < ethers.parseEther('160'),
    `${m.name} mark ${ethers.formatEther(mark)} is not between the stop-loss (120) and the take-profit (160)`)
})

// The guide's deadline: 10 s ahead, on the 500 ms grid, shared by all three.
const AUCTION_INTERVAL = 500_000n
const deadlineAfter = (lagUs) =>
  ((BigInt(Date.now()) * 1000n + lagUs + AUCTION_INTERVAL - 1n) / AUCTION_INTERVAL) * AUCTION_INTERVAL
const deadline = deadlineAfter(10_000_000n)
const ttl = 60n * 1_000_000n
const size = ethers.parseEther('5')

let entry, takeProfit, stopLoss
await step('encode', async () => {
  // 1. Entry: 5 long at 140 limit.
  entry = orderbook.interface.encodeFunctionData('submitOrder', [
    nvdaPerpId, size, ethers.parseEther('140'), 0 /* Limit */, deadline, ttl, 0 /* flags */,
  ])
  // 2. Take-profit: sell 5 when the price reaches 160 (reduce-only, asset-grouped).
  takeProfit = orderbook.interface.encodeFunctionData('submitTrigger', [
    nvdaPerpId, -size, ethers.parseEther('160'), ethers.parseEther('160'),
    0 /* TakeProfit */, 1 /* Asset */, deadline, ttl, true, false,
  ])
  // 3. Stop-loss: sell 5 when the price drops to 120 (reduce-only, asset-grouped).
  stopLoss = orderbook.interface.encodeFunctionData('submitTrigger', [
    nvdaPerpId, -size, ethers.parseEther('120'), ethers.parseEther('120'),
    1 /* StopLoss */, 1 /* Asset */, deadline, ttl, true, false,
  ])
})

let txHash
await step('submitBatch', async () => {
  const tx = await orderbook.submitBatch([entry, takeProfit, stopLoss])
  console.error('Batch tx:', tx.hash)
  txHash = tx.hash
})

// The envelope lands by its deadline (10 s ahead): allow 20 s.
await step('entry rests', async () => {
  check(txHash, 'no batch was admitted')
  let mine
  await poll(async () => {
    mine = (await ordersOf((m, p) => provider.send(m, p), wallet.address, nvdaPerpId)).find((o) => same(o.tx_hash, txHash))
    return mine?.status === 'active'
  }, 20_000, () => `the entry (buy 5 at 140) is ${describe(mine)}, not active`)
  check(BigInt(mine.initial_size) === size, `entry size ${mine.initial_size}, want ${size}`)
  check(mine.side === 'buy' && BigInt(mine.price) === ethers.parseEther('140'), `the entry is ${describe(mine)}, the guide sent buy 5 at 140`)
}, 25_000)

await step('triggers armed', async () => {
  let got
  await poll(async () => {
    got = (await provider.send('ob_getTriggers', [wallet.address, { orderbook_id: nvdaPerpId }]))?.triggers
      ?.filter((t) => same(t.tx_hash, txHash ?? ''))
    return got?.length >= 2
  }, 10_000, () => `ob_getTriggers holds ${JSON.stringify(got)?.slice(0, 300)}, want the take-profit and the stop-loss`)
  const show = (t) => `${t.trigger_type}/${t.grouping} size ${t.size} trigger ${t.trigger_price}`
  const tp = got.find((t) => BigInt(t.trigger_price) === ethers.parseEther('160'))
  const sl = got.find((t) => BigInt(t.trigger_price) === ethers.parseEther('120'))
  check(tp && sl, `no trigger at 160 or at 120 among ${got.map(show).join('; ')}`)
  for (const [t, type, limit] of [[tp, 'take_profit', '160'], [sl, 'stop_loss', '120']]) {
    check(t.trigger_type === type, `the trigger at ${limit} (sent as ${type}) shows trigger_type ${t.trigger_type}`)
    check(t.grouping === 'asset', `the ${type} shows grouping ${t.grouping}, sent 1 (Asset)`)
    check(BigInt(t.size) === -size, `the ${type} has size ${t.size}, want ${-size}`)
    check(BigInt(t.limit_price) === ethers.parseEther(limit), `the ${type} has limit_price ${t.limit_price}`)
    check(t.reduce_only === true && t.ioc === false, `the ${type} has reduce_only ${t.reduce_only}, ioc ${t.ioc}`)
  }
}, 15_000)

done()
