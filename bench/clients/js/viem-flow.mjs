// The client-compatibility matrix flow for viem 2 (see bench/clients/doc.go).
//
// Every call uses viem's defaults: no hand-set gas, fees or nonces. One line
// per step on stdout, `STEP <name> ok <ms>` or `STEP <name> fail <message>`; every
// step runs even when an earlier one failed, and the exit code is 0 unless
// the program itself crashed.
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 LEDGERD_WS=ws://127.0.0.1:8545 node viem-flow.mjs
import {
  createPublicClient, createWalletClient, defineChain, http, parseAbi, parseEther, webSocket,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

import {
  HTTP, WS, KEY1, KEY2, KEY3, ORDERBOOK, WETH, WETH_USD, ORDERBOOK_ABI as ABI, nextDeadline,
  attempt, report, step, check, poll, settled,
} from './flow.mjs'

const ledgerd = defineChain({
  id: 1293,
  name: 'ledgerd',
  nativeCurrency: { name: 'USD', symbol: 'USD', decimals: 18 }, // the quote of the dev markets
  rpcUrls: { default: { http: [HTTP], webSocket: [WS] } },
})
const ORDERBOOK_ABI = parseAbi(ABI)

// ---- the flow ------------------------------------------------------------

const publicClient = createPublicClient({ chain: ledgerd, transport: http(HTTP) })
const walletClient = createWalletClient({ chain: ledgerd, transport: http(HTTP) })
const account1 = privateKeyToAccount(KEY1)
const account2 = privateKeyToAccount(KEY2)
const account3 = privateKeyToAccount(KEY3)
const value = parseEther('0.5')

await step('chainId', async () => {
  const id = await publicClient.getChainId()
  check(id === ledgerd.id, `chain id ${id}, want ${ledgerd.id}`)
}, 5_000)

await step('balance', async () => {
  const balance = await publicClient.getBalance({ address: account1.address })
  check(balance > 0n, `balance ${balance}`)
}, 5_000)

await step('nonce', async () => {
  const nonce = await publicClient.getTransactionCount({ address: account1.address })
  check(Number.isInteger(nonce), `nonce ${nonce}`)
}, 5_000)

let hash
await step('transfer', async () => {
  hash = await walletClient.sendTransaction({ account: account1, to: account3.address, value })
}, 10_000)

await step('wait', async () => {
  check(hash, 'no transaction (transfer failed)')
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  check(receipt.status === 'success', `status ${receipt.status}`)
}, 15_000)

await step('getTransaction', async () => {
  check(hash, 'no transaction (transfer failed)')
  // viem throws TransactionNotFoundError where ethers answers null.
  await settled(() => publicClient.getTransaction({ hash }).catch(() => null), account1.address, account3.address, value)
}, 12_000)

await step('receipt', async () => {
  check(hash, 'no transaction (transfer failed)')
  const receipt = await publicClient.getTransactionReceipt({ hash })
  check(receipt.status === 'success', `status ${receipt.status}`)
}, 5_000)

// svc_orderbook has something to say only when an auction tick runs, and
// ticks run only while orders are pending: subscribe before the order step,
// collect after it (newHeads too, though it also hears idle slots).
const wsClient = createPublicClient({ chain: ledgerd, transport: webSocket(WS) })
let gotHead, lostHead
const firstHead = new Promise((resolve, reject) => { gotHead = resolve; lostHead = reject })
const unwatch = wsClient.watchBlocks({
  onBlock(block) {
    if (block?.number != null) gotHead(block)
    else lostHead(new Error('a newHeads notification, but no block decoded'))
  },
  onError: (err) => lostHead(err),
})
const heads = attempt(() => firstHead, 10_000)
// A custom subscription through the transport's public subscribe().
let gotBook, lostBook
const firstBook = new Promise((resolve, reject) => { gotBook = resolve; lostBook = reject })
const subscription = wsClient.transport.subscribe({
  params: ['svc_orderbook', { orderbook_ids: [WETH_USD], depth: 10 }],
  onData(data) {
    if (data.error) lostBook(new Error(`subscription closed: ${JSON.stringify(data.error)}`))
    else gotBook(data.result)
  },
  onError: (err) => lostBook(err),
})
subscription.catch(lostBook)
const books = attempt(() => firstBook, 10_000)
// Both subscriptions are live once the second subscribe call has been
// answered.
await attempt(() => subscription, 5_000)

let buyHash
const order = await attempt(async () => {
  const wethOf = (account) => publicClient.readContract({
    address: ORDERBOOK, abi: ORDERBOOK_ABI, functionName: 'balanceOf', args: [WETH, account.address],
  })
  const before = await wethOf(account1)
  const deadline = nextDeadline()
    const size = parseEther('1') // 1 WETH
  const price = parseEther('2000') // 2000 USD
  const submit = (account, size) => walletClient.writeContract({
    account, address: ORDERBOOK, abi: ORDERBOOK_ABI, functionName: 'submitOrder',
    args: [WETH_USD, size, price, 0, deadline, 60_000_000n, 0],
  })
  buyHash = await submit(account1, size)
  await submit(account2, -size)
  let now = before
  await poll(async () => {
    now = await wethOf(account1)
    return now - before === size
  }, 12_000, () => `WETH balance ${before} -> ${now}, want +${size}`)
}, 15_000)

await step('logs', async () => {
  check(buyHash, 'no order transaction (order failed)')
  const logs = await publicClient.getLogs({ address: ORDERBOOK })
  check(logs.some((l) => l.transactionHash === buyHash),
    `${logs.length} logs, none of the order ${buyHash}`)
}, 5_000)
report('newHeads', await heads)
report('svc_orderbook', await books)
report('order', order)
unwatch()
await attempt(async () => (await subscription).unsubscribe(), 2_000)


process.exit(0)
