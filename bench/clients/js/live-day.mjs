// A trader's day as the live network's own SDK (@pod-network/trade-sdk,
// ts-sdk/ of podnetwork/pod-sdk) goes through it, against `ledgerd --dev
// --compat --prefix pod` (TestLiveSDKDay): its REST reads under restUrl =
// <node>/v1, its pod_ channels over one WebSocket, and its writes the way its
// `write` entry builds them (to, data, value 0, EIP-1559 with no tip, gas
// 1 000 000), signed by viem's wallet client and broadcast with a raw
// eth_sendRawTransaction. The SDK itself is not on npm, so this program
// makes its calls by hand, with the paths, parameters and shapes of its
// rest.ts, ws.ts, write/index.ts and types/wire.ts.
//
// The day: the faucet funds a fresh key (Mint application), the trader reads
// status, markets, stats and the book; follows pod_orders_v2, pod_orderbook,
// pod_positions and pod_withdrawals; places a limit buy, moves it (update)
// and cancels it; sells into a dev account's bid in one submitBatch; reads
// its orders, fills, balances and candles back over REST; withdraws USD
// through the orderbook's withdraw and follows it by its withdrawal_id to a
// claimable status with a claim hash. (The delegated key and the perp entry
// with TP/SL are the live guides' programs, TestLiveGuides; the claim on the
// bridged chain is bench/bridge's TestClobWithdrawLoop.)
import {
  createPublicClient, createWalletClient, defineChain, encodeAbiParameters, encodeFunctionData,
  http, keccak256, parseAbi, parseEther, webSocket,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { HTTP, KEY2, WS, WETH, WETH_USD, check, poll, same, sleep } from './flow.mjs'
import { done, step } from './guide-steps.mjs'

const REST = `${HTTP}/v1`
const CLOB = '0x50d0000000000000000000000000000000000002'
const MINT = '0x00000000000000000000000000000000000fffff'
const USD = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE' // the native token
const INTERVAL_US = 500_000n

const chain = defineChain({
  id: 0x50d, name: 'ledgerd', nativeCurrency: { name: 'USD', symbol: 'USD', decimals: 18 },
  rpcUrls: { default: { http: [HTTP], webSocket: [WS] } },
})
const pub = createPublicClient({ chain, transport: http() })
const wallet = createWalletClient({ chain, transport: http() })
const ws = createPublicClient({ chain, transport: webSocket(WS) })

const CLOB_ABI = parseAbi([
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, bool reduceOnly, bool ioc)',
  'function cancel(bytes32 orderbookId, bytes32 canceledOrder, uint128 deadline)',
  'function update(bytes32 orderbookId, bytes32 updatedOrder, uint256 newSize, uint256 newPrice, address token, uint128 deadline)',
  'function submitBatch(bytes[] inner)',
  'function withdraw(address token, address recipient, uint256 amount, uint128 deadline)',
])
const MINT_ABI = parseAbi(['function mint(address to, (address token, uint256 amount)[] tokens, bool depositToClob)'])

const trader = privateKeyToAccount(generatePrivateKey())
const dev2 = privateKeyToAccount(KEY2)

async function rest(path) {
  const res = await fetch(REST + path, { headers: { accept: 'application/json' } })
  const body = await res.text()
  check(res.ok, `GET ${path}: ${res.status} ${body.slice(0, 200)}`)
  return JSON.parse(body)
}

// The SDK's default deadline: about ten years ahead (FAR_US), on the auction
// interval's grid (µs); an intent lands in the next batch whatever its
// deadline.
const soon = () => (BigInt(Date.now()) * 1000n + 10n * 365n * 86_400_000_000n) / INTERVAL_US * INTERVAL_US

// send prepares (viem fills nonce and fee cap) and signs a PodTxRequest as
// the SDK's consumers do, and broadcasts it raw;
// it waits for the receipt and returns it with the nonce it used.
async function send(account, to, data) {
  const request = await wallet.prepareTransactionRequest({
    account, chain, to, data, value: 0n, type: 'eip1559', maxPriorityFeePerGas: 0n, gas: 1_000_000n,
  })
  const nonce = request.nonce
  const signed = await wallet.signTransaction(request)
  const res = await fetch(HTTP, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [signed] }),
  })
  const json = await res.json()
  check(!json.error, `eth_sendRawTransaction: ${JSON.stringify(json.error)}`)
  const receipt = await pub.waitForTransactionReceipt({ hash: json.result, timeout: 20_000 })
  check(receipt.status === 'success', `${json.result} reverted`)
  return { hash: json.result, nonce, receipt }
}

// orderId is the live id of what signer sent at nonce (sequence 0: its own
// transaction): keccak256(abi.encode(signer, uint64 nonce, uint32 seq)).
const orderId = (signer, nonce, seq = 0) =>
  keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint64' }, { type: 'uint32' }], [signer, BigInt(nonce), seq]))

// Subscriptions: the SDK's channels and parameters (ws.ts wireParams).
const frames = { orders: [], book: [], positions: [], withdrawals: [] }
function follow(what, channel, params) {
  return ws.transport.subscribe({
    params: [channel, params],
    onData: (d) => frames[what].push(d.result),
    onError: (e) => console.error(`${channel}: ${e?.message ?? e}`),
  })
}

const fmt = (x) => JSON.stringify(x).slice(0, 240)
let market, buyId, sold

await step('faucet', async () => {
  const minter = privateKeyToAccount(generatePrivateKey()) // a throwaway signer holding nothing, as the SDK's mint
  const data = encodeFunctionData({
    abi: MINT_ABI, functionName: 'mint',
    args: [trader.address, [{ token: USD, amount: parseEther('10000') }, { token: WETH, amount: parseEther('5') }], true],
  })
  const { receipt } = await send(minter, MINT, data)
  check(receipt.logs.length === 2, `mint logs: ${receipt.logs.length}`)
  const b = await rest(`/clob/balances/${trader.address}`)
  check(BigInt(b.cash) >= parseEther('10000'), `cash after the mint: ${fmt(b)}`)
  const weth = b.balances.find((h) => same(h.orderbook_id, WETH_USD))
  check(weth && BigInt(weth.balance) === parseEther('5'), `WETH holding after the mint: ${fmt(b.balances)}`)
})

await step('status, markets, stats', async () => {
  const s = await rest('/clob/status')
  check(Number.isInteger(s.solution_now) && s.solution_now >= 0, `status ${fmt(s)}`)
  const markets = await rest('/clob/markets')
  market = markets.find((m) => m.id === WETH_USD)
  check(market && market.market_type === 'spot' && market.auction_interval_us === Number(INTERVAL_US) &&
    typeof market.tick_precision === 'string' && /^\d+$/.test(market.lot_size), `markets: ${fmt(markets)}`)
  const stats = await rest('/clob/markets/stats')
  check(Array.isArray(stats.markets) && stats.markets.some((m) => m.orderbook_id === WETH_USD), `stats: ${fmt(stats)}`)
})

await step('subscribe', async () => {
  await follow('orders', 'pod_orders_v2', { account: trader.address })
  await follow('book', 'pod_orderbook', { clob_ids: [WETH_USD], depth: 20 })
  await follow('positions', 'pod_positions', { account: trader.address, since: 0 })
  await follow('withdrawals', 'pod_withdrawals', { account: trader.address })
  await poll(() => frames.positions.length > 0, 5_000, () => 'no pod_positions snapshot')
  check(same(frames.positions[0].account, trader.address) && frames.positions[0].data, `pod_positions: ${fmt(frames.positions[0])}`)
})

await step('limit buy, update, cancel', async () => {
  const buy = encodeFunctionData({ abi: CLOB_ABI, functionName: 'submitOrder',
    args: [WETH_USD, parseEther('1'), parseEther('1000'), 0, soon(), 3_600_000_000n, false, false] })
  const placed = await send(trader, CLOB, buy)
  buyId = orderId(trader.address, placed.nonce)
  await poll(async () => (await rest(`/clob/orders/${trader.address}`)).orders.some((o) => o.order_id === buyId && o.status === 'active'),
    10_000, () => 'the buy is not active in /clob/orders')
  const update = encodeFunctionData({ abi: CLOB_ABI, functionName: 'update',
    args: [WETH_USD, buyId, parseEther('1'), parseEther('1100'), USD, soon()] })
  await send(trader, CLOB, update)
  await poll(async () => {
    const page = await rest(`/clob/orders/${trader.address}`)
    return page.orders.some((o) => o.order_id === buyId && BigInt(o.price) === parseEther('1100'))
  }, 10_000, () => 'the update did not reach /clob/orders')
  const cancel = encodeFunctionData({ abi: CLOB_ABI, functionName: 'cancel', args: [WETH_USD, buyId, soon()] })
  await send(trader, CLOB, cancel)
  await poll(async () => (await rest(`/clob/orders/${trader.address}`)).orders.some((o) => o.order_id === buyId && o.status === 'canceled'),
    10_000, () => 'the cancel did not reach /clob/orders')
  await poll(() => frames.orders.some((f) => f.events?.some((e) => e.k === 'cancel')), 5_000,
    () => `no cancel event on pod_orders_v2: ${fmt(frames.orders)}`)
})

await step('batch sell into a bid', async () => {
  const bid = encodeFunctionData({ abi: CLOB_ABI, functionName: 'submitOrder',
    args: [WETH_USD, parseEther('2'), parseEther('2000'), 0, soon(), 60_000_000n, false, false] })
  await send(dev2, CLOB, bid)
  const sell = (size) => encodeFunctionData({ abi: CLOB_ABI, functionName: 'submitOrder',
    args: [WETH_USD, -parseEther(size), parseEther('1990'), 0, soon(), 60_000_000n, false, false] })
  const batch = encodeFunctionData({ abi: CLOB_ABI, functionName: 'submitBatch', args: [[sell('0.5'), sell('0.5')]] })
  sold = await send(trader, CLOB, batch)
  const ids = [orderId(trader.address, sold.nonce, 0), orderId(trader.address, sold.nonce, 1)]
  await poll(async () => {
    const page = await rest(`/clob/orders/${trader.address}`)
    return ids.every((id) => page.orders.some((o) => o.order_id === id && o.status === 'filled'))
  }, 10_000, () => 'the batch\'s sells did not fill')
  await poll(() => frames.orders.some((f) => f.events?.some((e) => e.k === 'fill' && e.st === 'filled')), 5_000,
    () => `no filling event on pod_orders_v2: ${fmt(frames.orders)}`)
  await poll(() => frames.book.length > 0, 5_000, () => 'no pod_orderbook frame')
})

await step('orders, balances, tx, candles', async () => {
  const page = await rest(`/clob/orders/${trader.address}?limit=2`)
  check(page.orders.length === 2 && typeof page.total_count === 'number' && page.total_count >= 3 && page.next_cursor,
    `orders page: ${fmt(page)}`)
  const rest2 = await rest(`/clob/orders/${trader.address}?cursor=${encodeURIComponent(page.next_cursor)}`)
  check(rest2.orders.length >= 1 && !rest2.orders.some((o) => page.orders.some((p) => p.order_id === o.order_id)), `second page: ${fmt(rest2)}`)
  const b = await rest(`/clob/balances/${trader.address}`)
  const weth = b.balances.find((h) => same(h.orderbook_id, WETH_USD))
  check(weth && BigInt(weth.balance) === parseEther('4'), `WETH after selling 1: ${fmt(b.balances)}`)
  const tx = await rest(`/tx/${sold.hash}`)
  check(JSON.stringify(tx).includes(sold.hash.slice(2, 20)), `/tx: ${fmt(tx)}`)
  const c = await rest(`/clob/candles/${WETH_USD}?resolution=1m`)
  check(Array.isArray(c.candles) && typeof c.solution_now_us === 'number' && c.resolution, `candles: ${fmt(c)}`)
})

await step('withdraw through the orderbook, claimable by withdrawal_id', async () => {
  const cfg = await rest('/bridge/config')
  const usd = cfg.tokens.find((t) => same(t.pod_token, USD))
  check(usd, `no pod_token USD in /bridge/config: ${fmt(cfg)}`)
  const amount = BigInt(usd.min) * 10n ** BigInt(18 - usd.decimals) * 2n
  const data = encodeFunctionData({ abi: CLOB_ABI, functionName: 'withdraw', args: [USD, trader.address, amount, soon()] })
  const w = await send(trader, CLOB, data)
  const id = orderId(trader.address, w.nonce)
  const row = await poll(async () => (await rest(`/bridge/withdrawals/${trader.address}`)).find((r) => r.withdrawal_id === id),
    15_000, () => `no withdrawal row with id ${id}`)
  check(!row.error && BigInt(row.amount) === amount, `row ${fmt(row)}`)
  const detail = await poll(async () => {
    const d = await rest(`/bridge/withdrawals/by-id/${id}`)
    return d.proof?.claim_hash ? d : null
  }, 15_000, () => 'no claim hash by withdrawal_id')
  check(detail.status === 'claimable' && detail.withdrawal.withdrawal_id === id, `by-id: ${fmt(detail)}`)
  await poll(() => frames.withdrawals.some((f) => (Array.isArray(f) ? f : [f]).some((r) => r.withdrawal_id === id)), 5_000,
    () => `no pod_withdrawals row: ${fmt(frames.withdrawals)}`)
})

await sleep(10)
done()
