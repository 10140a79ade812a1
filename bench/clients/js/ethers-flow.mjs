// The client-compatibility matrix flow for ethers 6 (see bench/clients/doc.go).
//
// Every call uses ethers' defaults: no hand-set gas, fees or nonces. One line
// per step on stdout, `STEP <name> ok <ms>` or `STEP <name> fail <message>`; every
// step runs even when an earlier one failed, and the exit code is 0 unless
// the program itself crashed.
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 LEDGERD_WS=ws://127.0.0.1:8545 node ethers-flow.mjs
import { ethers } from 'ethers'

import {
  HTTP, WS, KEY1, KEY2, KEY3, ORDERBOOK, WETH, WETH_USD, ORDERBOOK_ABI, nextDeadline,
  attempt, report, step, check, sleep, poll, settled, traceRPC,
} from './flow.mjs'

const CHAIN_ID = 1293n

// ---- the flow ------------------------------------------------------------

const provider = new ethers.JsonRpcProvider(HTTP)
traceRPC(provider)
const account1 = new ethers.Wallet(KEY1, provider)
const account2 = new ethers.Wallet(KEY2, provider)
const account3 = new ethers.Wallet(KEY3)
const value = ethers.parseEther('0.5')

await step('chainId', async () => {
  const { chainId } = await provider.getNetwork()
  check(chainId === CHAIN_ID, `chain id ${chainId}, want ${CHAIN_ID}`)
}, 5_000)

await step('balance', async () => {
  const balance = await provider.getBalance(account1.address)
  check(balance > 0n, `balance ${balance}`)
}, 5_000)

await step('nonce', async () => {
  const nonce = await provider.getTransactionCount(account1.address)
  check(Number.isInteger(nonce), `nonce ${nonce}`)
}, 5_000)

let tx
await step('transfer', async () => {
  tx = await account1.sendTransaction({ to: account3.address, value })
}, 10_000)

await step('wait', async () => {
  check(tx, 'no transaction (transfer failed)')
  const receipt = await tx.wait()
  check(receipt?.status === 1, `status ${receipt?.status}`)
}, 15_000)

await step('getTransaction', async () => {
  check(tx, 'no transaction (transfer failed)')
  await settled(() => provider.getTransaction(tx.hash), account1.address, account3.address, value)
}, 12_000)

await step('receipt', async () => {
  check(tx, 'no transaction (transfer failed)')
  const receipt = await provider.getTransactionReceipt(tx.hash)
  check(receipt, 'receipt null')
  check(receipt.status === 1, `status ${receipt.status}`)
}, 5_000)

// svc_orderbook has something to say only when an auction tick runs, and
// ticks run only while orders are pending: subscribe before the order step,
// collect after it (newHeads too, though it also hears idle slots).
const wsProvider = new ethers.WebSocketProvider(WS)
wsProvider.on('error', (err) => console.error('ws provider error:', err))
traceRPC(wsProvider)
let gotHead
const firstHead = new Promise((resolve) => { gotHead = resolve })
const listening = wsProvider.once('block', gotHead)
const heads = attempt(async () => { await listening; await firstHead }, 10_000)
const books = attempt(() => firstOrderbookNotification(wsProvider), 10_000)
// A request sent after the eth_subscribe calls is answered after them: once
// it is back, both subscriptions are live.
await attempt(async () => { await listening; await wsProvider.send('eth_blockNumber', []) }, 5_000)

// ethers shares identical requests made within 250 ms (its cacheTimeout):
// when the steps above failed fast, the order would reuse the transfer's
// "pending" nonce without this pause.
await sleep(300)
let buyTx
const order = await attempt(async () => {
  const book1 = new ethers.Contract(ORDERBOOK, ORDERBOOK_ABI, account1)
  const book2 = new ethers.Contract(ORDERBOOK, ORDERBOOK_ABI, account2)
  const before = await book1.balanceOf(WETH, account1.address)
  const deadline = nextDeadline()
    const size = ethers.parseEther('1') // 1 WETH
  const price = ethers.parseEther('2000') // 2000 USD
  buyTx = await book1.submitOrder(WETH_USD, size, price, 0, deadline, 60_000_000n, 0)
  await book2.submitOrder(WETH_USD, -size, price, 0, deadline, 60_000_000n, 0)
  let now = before
  await poll(async () => {
    now = await book1.balanceOf(WETH, account1.address)
    return now - before === size
  }, 12_000, () => `WETH balance ${before} -> ${now}, want +${size}`)
}, 15_000)

await step('logs', async () => {
  check(buyTx, 'no order transaction (order failed)')
  const logs = await provider.getLogs({ address: ORDERBOOK })
  check(logs.some((l) => l.transactionHash === buyTx.hash),
    `${logs.length} logs, none of the order ${buyTx.hash}`)
}, 5_000)
report('newHeads', await heads)
report('svc_orderbook', await books)
report('order', order)

// firstOrderbookNotification subscribes to svc_orderbook and resolves with
// the first notification.
//
// ethers 6 has no public API for subscription types it does not know:
// provider.on() accepts only its own events ("block", "pending", log
// filters, transaction hashes), and the SocketSubscriber hook
// (provider._register) is underscore-prefixed, outside the semver promise.
// The most public route is the documented provider.send() for eth_subscribe
// plus the documented provider.websocket getter to read the notifications.
// The provider itself keeps notifications for ids it did not subscribe to
// (its pending queue), so a long-lived subscription should eth_unsubscribe
// when done, as this one does.
async function firstOrderbookNotification(p) {
  const notifications = new Map() // subscription id -> first payload
  let waiter = null
  p.websocket.addEventListener('message', (event) => {
    const msg = JSON.parse(String(event.data))
    if (msg.method !== 'eth_subscription' || notifications.has(msg.params?.subscription)) return
    notifications.set(msg.params.subscription, msg.params)
    waiter?.()
  })
  const id = await p.send('eth_subscribe', ['svc_orderbook', { orderbook_ids: [WETH_USD], depth: 10 }])
  while (!notifications.has(id)) await new Promise((resolve) => { waiter = resolve })
  await p.send('eth_unsubscribe', [id])
  const { result, error } = notifications.get(id)
  check(!error, `subscription closed: ${JSON.stringify(error)}`)
  return result
}


provider.destroy()
await wsProvider.destroy()
process.exit(0)
