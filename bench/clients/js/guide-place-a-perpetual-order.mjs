// The live guide "Place a perpetual order" (doc/api-reference/guides/
// place-a-perpetual-order.md), ethers 6, as written: deposit 1000 USD of
// margin into the orderbook and wait for it, then a plain resting limit long
// of 5 NVDA at 140 on the NVDA-USD perp. Then what the guide promises: the
// order rests, on a perpetual market, reduce_only false.
//
// Changed from the guide: the URL and PRIVATE_KEY (dev account 1). The
// market is the guide's NVDA-USD perp, id 0x…07 (TestLiveGuides creates it).
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 node guide-place-a-perpetual-order.mjs
import { ethers } from 'ethers'
import { HTTP, KEY1, check, describe, done, guideMarket, ordersOf, poll, same, step } from './guide-steps.mjs'

// cacheTimeout -1 is the one change beyond the URL and key: ethers caches
// every request for 250 ms, so the guide's second send, right after the
// deposit's wait(), would reuse the deposit's pending nonce whenever the
// deposit confirms in under 250 ms (docs/compat.md; anvil does the same).
const provider = new ethers.JsonRpcProvider(HTTP, undefined, { cacheTimeout: -1 })
const wallet = new ethers.Wallet(KEY1, provider)
const send = (method, params) => provider.send(method, params)

const ORDERBOOK = '0x50d0000000000000000000000000000000000002'
const abi = [
  'function deposit(address token, address recipient, uint256 amount, uint128 deadline)',
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
]
const orderbook = new ethers.Contract(ORDERBOOK, abi, wallet)

// USD is the native token.
const USD = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
const nvdaPerpId = '0x0000000000000000000000000000000000000000000000000000000000000007' // NVDA-USD perp (max 20x)
await step('market', () => guideMarket(send, nvdaPerpId, 'perpetual', 20))

const AUCTION_INTERVAL = 500_000n
const deadlineAfter = (lagUs) =>
  ((BigInt(Date.now()) * 1000n + lagUs + AUCTION_INTERVAL - 1n) / AUCTION_INTERVAL) * AUCTION_INTERVAL

// 1. Deposit USD margin, and wait for it (deadline 60 s ahead).
await step('deposit', async () => {
  const margin = ethers.parseEther('1000')
  const receipt = await (await orderbook.deposit(USD, wallet.address, margin, deadlineAfter(60_000_000n))).wait()
  check(receipt.status === 1, `deposit receipt status ${receipt.status}`)
}, 70_000)

// 2. A long: 5 at 140 limit.
const size = ethers.parseEther('5')
const price = ethers.parseEther('140')
const orderType = 0
const deadline = deadlineAfter(10_000_000n)
const ttl = 60n * 1_000_000n
let txHash, order
await step('submitOrder', async () => {
  const tx = await orderbook.submitOrder(nvdaPerpId, size, price, orderType, deadline, ttl, 0)
  console.error('Perp order tx:', tx.hash)
  txHash = tx.hash
})

await step('order rests', async () => {
  check(txHash, 'no order was admitted')
  let mine
  await poll(async () => {
    mine = (await ordersOf(send, wallet.address, nvdaPerpId)).find((o) => same(o.tx_hash, txHash))
    return mine?.status === 'active'
  }, 20_000, () => `the order from ${txHash} is ${describe(mine)}, not active`)
  check(mine.side === 'buy' && BigInt(mine.initial_size) === size && BigInt(mine.price) === price,
    `the order is ${describe(mine)}, the guide sent buy 5 at 140`)
  check(mine.market_type === 'perpetual', `market_type ${mine.market_type}`)
  order = mine
}, 25_000)

// The live reference (openapi Order): reduce_only and ioc are present on a
// perpetual market's orders; flags 0 is neither.
await step('order flags', async () => {
  check(order, 'no resting order to read')
  check(order.reduce_only === false && order.ioc === false,
    `ob_getOrders shows reduce_only ${order.reduce_only}, ioc ${order.ioc} for a perp order sent with flags 0 (openapi Order: present, false)`)
})

done()
