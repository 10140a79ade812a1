// The live guide "Read market data" (doc/api-reference/guides/
// read-market-data.md): its five ob_ reads through ethers 6's
// provider.send, with the guide's parameters, each checked for the shape the
// guide's comment promises.
//
// Changed from the guide: the URL; walletAddress (dev account 1) and
// startTimestamp, endTimestamp, interval (the last hour, "1m"), which the
// guide leaves to the reader. Not in the guide: a first step, `setup`, trades
// on the guide's market (dev account 1 bids 1 at 2000, dev account 2 sells
// 0.5 into it) so that the book, the candles, the orders and the positions
// have something to show.
//
// Where the guide's call or its promised shape differs from the live
// network's JSON-RPC reference (doc/api-reference/json-rpc/openapi.yaml),
// the extra steps marked `openapi` make the reference's call, so a failure
// tells a guide that disagrees with the reference from a node that does.
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 node guide-read-market-data.mjs
import { ethers } from 'ethers'
import { HTTP, KEY1, KEY2, check, done, ordersOf, poll, same, step } from './guide-steps.mjs'

const provider = new ethers.JsonRpcProvider(HTTP)
const walletAddress = new ethers.Wallet(KEY1).address
const orderbookId = '0x0000000000000000000000000000000000000000000000000000000000000001' // NVDAx-USD spot (WETH/USD here)
const isHex = (v) => typeof v === 'string' && /^0x[0-9a-fA-F]+$/.test(v)

await step('setup', async () => {
  const abi = ['function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)']
  const deadline = (BigInt(Date.now()) * 1000n / 500_000n + 4n) * 500_000n
  const price = ethers.parseEther('2000')
  const buy = new ethers.Contract('0x50d0000000000000000000000000000000000002', abi, new ethers.Wallet(KEY1, provider))
  const sell = new ethers.Contract('0x50d0000000000000000000000000000000000002', abi, new ethers.Wallet(KEY2, provider))
  await buy.submitOrder(orderbookId, ethers.parseEther('1'), price, 0, deadline, 0n, 0)
  await sell.submitOrder(orderbookId, -ethers.parseEther('0.5'), price, 0, deadline, 0n, 0)
  await poll(async () => (await ordersOf((m, p) => provider.send(m, p), walletAddress, orderbookId))
    .some((o) => o.status === 'active' && BigInt(o.filled_base_amount) === ethers.parseEther('0.5')), 15_000,
  () => 'the bid did not fill half within 15 s')
})

// List available markets.
await step('getMarkets', async () => {
  const markets = await provider.send('ob_getMarkets', [])
  // Returns: [{ id, name, base_token_symbol, quote_token_symbol, last_clearing_price, volume_24h, ... }]
  check(Array.isArray(markets) && markets.length > 0, `not a non-empty array: ${JSON.stringify(markets).slice(0, 200)}`)
  for (const f of ['id', 'name', 'base_token_symbol', 'quote_token_symbol', 'last_clearing_price', 'volume_24h']) {
    check(markets.every((m) => f in m), `a market has no ${f}`)
  }
  const m = markets.find((x) => x.id === orderbookId)
  check(m, `no market ${orderbookId}`)
  check(BigInt(m.last_clearing_price) === ethers.parseEther('2000'), `last_clearing_price ${m.last_clearing_price}, the setup traded at 2000`)
  check(BigInt(m.volume_24h) > 0n, `volume_24h ${m.volume_24h} after a trade`)
})

// Get orderbook snapshot.
await step('getOrderbook', async () => {
  const depth = 20
  const snapshot = await provider.send('ob_getOrderbook', [orderbookId, depth])
  // Returns: { buys: { price: { volume } }, sells: { ... }, timestamp }
  check(snapshot && typeof snapshot.buys === 'object' && typeof snapshot.sells === 'object' && !Array.isArray(snapshot.buys),
    `buys/sells are not price-keyed objects: ${JSON.stringify(snapshot).slice(0, 200)}`)
  check(Number.isInteger(snapshot.timestamp) && snapshot.timestamp > 0, `timestamp ${snapshot.timestamp}`)
  const level = Object.entries(snapshot.buys).find(([p]) => BigInt(p) === ethers.parseEther('2000'))
  check(level && isHex(level[1].volume) && BigInt(level[1].volume) === ethers.parseEther('0.5'),
    `the bid level at 2000: ${JSON.stringify(level)}, want volume 0.5`)
})

// Get OHLCV candles, with the guide's positional parameters.
const endTimestamp = BigInt(Date.now()) * 1000n + 60_000_000n // microseconds
const startTimestamp = endTimestamp - 3_600_000_000n
const interval = '1m'
const candleShape = (candles) => {
  check(Array.isArray(candles) && candles.length > 0, `no candles: ${JSON.stringify(candles).slice(0, 200)}`)
  for (const f of ['timestamp', 'open', 'high', 'low', 'close', 'volume']) check(f in candles[0], `a candle has no ${f}`)
  check(BigInt(candles[0].close) === ethers.parseEther('2000'), `close ${candles[0].close}, the setup traded at 2000`)
}
await step('getCandles', async () => {
  const candles = await provider.send('ob_getCandles', [
    orderbookId,
    Number(startTimestamp), // microseconds
    Number(endTimestamp), // microseconds
    interval, // candle interval
  ])
  candleShape(candles)
})
await step('getCandles openapi', async () => {
  candleShape(await provider.send('ob_getCandles', [
    orderbookId, { resolution: interval, from_ts: Number(startTimestamp), to_ts: Number(endTimestamp) },
  ]))
})

// Get order history, with the guide's call. The guide's comment promises a
// bare array of {hash, side, status, price, remainingBase, filledBase,
// filledQuote}; the live JSON-RPC reference (openapi.yaml, ob_getOrders) and
// this node answer {orders: [Order], next_cursor}, with order_id and tx_hash
// (the guide's hash), initial_size and filled_base_amount (remainingBase is
// their difference) and filled_quote_amount. The reference wins: the check
// is its shape, and that clob_ids filters to the guide's market.
await step('getOrders', async () => {
  const page = await provider.send('ob_getOrders', [
    walletAddress,
    { clob_ids: [orderbookId] },
  ])
  check(Array.isArray(page?.orders), `no orders array: ${JSON.stringify(page).slice(0, 160)}`)
  check(page.orders.every((x) => x.orderbook_id === orderbookId), `clob_ids did not filter: ${page.orders.map((x) => x.orderbook_id).join(',')}`)
  const o = page.orders.find((x) => x.status === 'active')
  check(o, 'no active order on the guide market')
  for (const f of ['order_id', 'tx_hash', 'side', 'status', 'price', 'initial_size', 'filled_base_amount', 'filled_quote_amount']) check(f in o, `an order has no ${f}`)
  check(o.side === 'buy' && BigInt(o.initial_size) - BigInt(o.filled_base_amount) === ethers.parseEther('0.5') &&
    BigInt(o.filled_quote_amount) === ethers.parseEther('1000'), `the bid: side ${o.side}, size ${o.initial_size}, filled ${o.filled_base_amount} for ${o.filled_quote_amount}`)
})

// Get positions.
await step('getPositions', async () => {
  const positions = await provider.send('ob_getPositions', [walletAddress])
  check(positions && Array.isArray(positions.positions), `no positions array: ${JSON.stringify(positions).slice(0, 200)}`)
  const base = positions.positions.find((p) => same(p.token ?? p.token_address ?? '', '0x5000000000000000000000000000000000000001') || p.orderbook_id === orderbookId)
  check(base, `no position in the base bought: ${JSON.stringify(positions.positions).slice(0, 300)}`)
})

done()
