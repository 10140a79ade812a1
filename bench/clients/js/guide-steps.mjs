// What the guide flows share (guide-*.mjs, TestLiveGuides): the step
// protocol of flow.mjs, one line per step on stdout, `STEP <name> ok
// <milliseconds>` or `STEP <name> fail <reason>`, every step run even when an
// earlier one failed; and done(), which exits 1 when any step failed.
//
// The guides are the live network's own TypeScript guides
// (doc/api-reference/guides/*.md of podnetwork/pod-sdk), written as they
// stand; only the URL, the private keys (dev accounts of `ledgerd --dev`) and
// the market ids (read from the node where the live one does not exist here)
// differ.
//
// TestLiveGuides prepares each node as the guides assume the live testnet:
// the NVDA-USD perp (id 0x…07, 20x) exists, its oracle at 150, between the
// batch guide's stop-loss (120) and take-profit (160).
import { attempt, report } from './flow.mjs'

export { HTTP, KEY1, KEY2, check, poll, same, sleep } from './flow.mjs'

let failed = 0

// step runs fn (bounded by ms), prints its line and tells whether it passed.
export async function step(name, fn, ms = 20_000) {
  const outcome = await attempt(fn, ms)
  report(name, outcome)
  if (!outcome.ok) failed++
  return outcome.ok
}

export function done() {
  process.exit(failed ? 1 : 0)
}

// guideMarket checks that the market a guide names by id is on the node, of
// the type the guide says (on the live testnet 0x…01 is the NVDAx-USD spot
// market, 0x…07 the NVDA-USD perp at 20x; on `ledgerd --dev` 0x…01 is
// WETH/USD, and TestLiveGuides creates the NVDA-USD perp at 0x…07 with
// admin_createMarket), and returns it.
export async function guideMarket(send, id, type, leverage) {
  const markets = await send('ob_getMarkets', [])
  const m = markets.find((x) => x.id === id)
  if (!m) throw new Error(`market ${id} is not on the node (ob_getMarkets: ${markets.map((x) => `${x.name} ${x.id.slice(-2)}`).join(', ')}); TestLiveGuides creates it`)
  if (m.market_type !== type) throw new Error(`market ${m.name} is ${m.market_type}, the guide trades a ${type} market`)
  if (leverage && Number(m.max_leverage) !== leverage) throw new Error(`market ${m.name} has max_leverage ${m.max_leverage}, the guide says ${leverage}x`)
  return m
}

// ordersOf reads an account's orders on one book, as the live reference
// answers ob_getOrders: {orders, next_cursor}.
export async function ordersOf(send, account, orderbookId) {
  const page = await send('ob_getOrders', [account, { orderbook_id: orderbookId }])
  if (!Array.isArray(page?.orders)) throw new Error(`ob_getOrders: no orders array in ${JSON.stringify(page).slice(0, 200)}`)
  return page.orders
}

// describe is an order's salient fields for a failure message.
export function describe(o) {
  return o ? `${o.side} ${o.initial_size} @ ${o.price} ${o.status} bidder ${o.bidder}` : 'none'
}
