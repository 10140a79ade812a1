// The live guide "Place a spot order" (doc/api-reference/guides/
// place-a-spot-order.md), ethers 6, as written: deposit 1000 USD (the
// native token, the quote) into the orderbook and wait for it, then a plain
// resting limit buy of 1 base at 200 USD. Then what the guide promises: the
// order rests on the book.
//
// Changed from the guide: the URL and PRIVATE_KEY (dev account 1). The
// market id is the guide's, 0x…01: NVDAx-USD on the live testnet, WETH/USD
// on `ledgerd --dev`, a spot market quoted in USD either way.
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 node guide-place-a-spot-order.mjs
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
const orderbookId = '0x0000000000000000000000000000000000000000000000000000000000000001'
await step('market', async () => {
  const m = await guideMarket(send, orderbookId, 'spot')
  check(same(m.quote_token_address, USD), `${m.name} is quoted in ${m.quote_token_address}, not USD`)
})

const AUCTION_INTERVAL = 500_000n
const deadlineAfter = (lagUs) =>
  ((BigInt(Date.now()) * 1000n + lagUs + AUCTION_INTERVAL - 1n) / AUCTION_INTERVAL) * AUCTION_INTERVAL

// 1. Deposit USD (the quote token) into the orderbook, and wait for it. Its
// deadline is 60 s ahead: the deposit may land in any batch up to it.
await step('deposit', async () => {
  const depositAmount = ethers.parseEther('1000')
  const receipt = await (await orderbook.deposit(USD, wallet.address, depositAmount, deadlineAfter(60_000_000n))).wait()
  check(receipt.status === 1, `deposit receipt status ${receipt.status}`)
}, 70_000)

// 2. A buy limit order: 1 base at 200 USD.
const size = ethers.parseEther('1')
const price = ethers.parseEther('200')
const orderType = 0
const deadline = deadlineAfter(10_000_000n)
const ttl = 60n * 1_000_000n
let txHash
await step('submitOrder', async () => {
  const tx = await orderbook.submitOrder(orderbookId, size, price, orderType, deadline, ttl, 0)
  console.error('Order tx:', tx.hash)
  txHash = tx.hash
})

await step('order rests', async () => {
  check(txHash, 'no order was admitted')
  let mine
  await poll(async () => {
    mine = (await ordersOf(send, wallet.address, orderbookId)).find((o) => same(o.tx_hash, txHash))
    return mine?.status === 'active'
  }, 20_000, () => `the order from ${txHash} is ${describe(mine)}, not active`)
  check(mine.side === 'buy' && BigInt(mine.initial_size) === size && BigInt(mine.price) === price,
    `the order is ${describe(mine)}, the guide sent buy 1 at 200`)
  const book = await send('ob_getOrderbook', [orderbookId, 20])
  const level = Object.entries(book.buys ?? {}).find(([p]) => BigInt(p) === price)
  check(level && BigInt(level[1].volume) === size, `the book's bids at 200: ${JSON.stringify(level)}`)
}, 25_000)

done()
