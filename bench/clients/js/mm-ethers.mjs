// A market maker in 80 lines, ethers 6: the strategy the README's "Testing
// a strategy" puts through the lab. Every round it reads the book, and
// quotes one bid and one ask SPREAD_BPS around the mid in one submitBatch;
// the orders rest one second (ttl), so the next round's quotes replace them
// without a cancel. Time is the node's (svc_pastPerfectTime), not the
// wall clock's: under a scenario the venue's clock is the scenario's. It
// prints what it did and the median time the node took to answer it (an
// injected latency shows there).
//
//   LEDGERD_RPC=ws://127.0.0.1:8545 MM_ROUNDS=20 node mm-ethers.mjs
import { ethers } from 'ethers'

const url = process.env.LEDGERD_RPC ?? 'ws://127.0.0.1:8545'
const provider = url.startsWith('ws') ? new ethers.WebSocketProvider(url) : new ethers.JsonRpcProvider(url)
// Dev account (2) of `ledgerd --dev`: the standard test mnemonic's third key.
const wallet = new ethers.Wallet(process.env.MM_KEY ?? '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a', provider)
const MARKET = process.env.MM_MARKET ?? '0x0000000000000000000000000000000000000000000000000000000000000001' // WETH/USD
const SPREAD_BPS = BigInt(process.env.MM_SPREAD_BPS ?? '10')
const ROUNDS = Number(process.env.MM_ROUNDS ?? '20')
const SIZE = ethers.parseEther(process.env.MM_SIZE ?? '0.1')
const STEP = ethers.parseEther('0.01') // WETH/USD's price step
const INTERVAL = 500_000n // µs between auctions

const orderbook = new ethers.Contract('0x50d0000000000000000000000000000000000002', [
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
  'function submitBatch(bytes[] inner)',
], wallet)

// nodeTime reads the venue's time, and times the answer.
const rtts = []
const nodeTime = async () => {
  const start = performance.now()
  const t = BigInt(await provider.send('svc_pastPerfectTime', []))
  rtts.push(performance.now() - start)
  return t
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const onStep = (p) => (p / STEP) * STEP

// A market maker keeps its own nonce: one read at start, then counted
// (ethers also caches eth_getTransactionCount for 250 ms, its provider's
// cacheTimeout: on a venue that settles faster, a fresh read repeats a nonce).
let nonce = await provider.getTransactionCount(wallet.address)
let quoted = 0
let refused = 0
let last = 0n
for (let round = 0; round < ROUNDS; round++) {
  // One round per second of the venue's time (a venue whose time stands
  // still for 30 s ends the run: a scenario played to its end).
  let now = await nodeTime()
  for (let waited = 0; now / 1_000_000n === last && waited < 600; waited++) {
    await sleep(50)
    now = await nodeTime()
  }
  if (now / 1_000_000n === last) break
  last = now / 1_000_000n
  const book = await provider.send('ob_getOrderbook', [MARKET, 1])
  const bid = Object.keys(book.buys ?? {}).map(BigInt).sort((a, b) => (b > a ? 1 : -1))[0]
  const ask = Object.keys(book.sells ?? {}).map(BigInt).sort((a, b) => (a > b ? 1 : -1))[0]
  if (!bid || !ask) continue // nothing to quote around yet
  const mid = (bid + ask) / 2n
  const half = onStep((mid * SPREAD_BPS) / 20_000n) || STEP
  const deadline = (now / INTERVAL + 2n) * INTERVAL
  const order = (size, price) => orderbook.interface.encodeFunctionData('submitOrder', [MARKET, size, price, 0, deadline, 1_000_000n, 0])
  try {
    const tx = await orderbook.submitBatch([order(SIZE, onStep(mid - half)), order(-SIZE, onStep(mid + half))], { nonce })
    nonce++
    await tx.wait() // the venue admits one pending transaction per account
    quoted++
  } catch (e) {
    // A refusal (a rate limit, a deadline the venue's time passed) is
    // part of the test: count it, re-read the nonce, quote next round.
    refused++
    const why = e.info?.error ?? e.error ?? {}
    console.error(`round ${round}: ${e.shortMessage ?? e.message} ${JSON.stringify(why)}`)
    nonce = await provider.getTransactionCount(wallet.address)
  }
}
rtts.sort((a, b) => a - b)
const p50 = rtts.length ? Math.round(rtts[rtts.length >> 1]) : 0
console.log(JSON.stringify({ account: wallet.address, rounds: ROUNDS, quoted, refused, rtt_ms_p50: p50 }))
process.exit(0) // (ethers 6.17's WebSocketProvider.destroy() can throw while a block subscription starts)
