// The live guide "Delegate a trading key" (doc/api-reference/guides/
// delegate-a-trading-key.md), ethers 6, as written: the master signs one
// EIP-712 DelegationAuth for a fresh, unfunded delegate key valid for a week;
// the delegate wraps a 5-lot long at 140 on the NVDA-USD perp in
// delegated(master, validUntil, signature, inner) and sends it with its own
// key. Then what the guide promises: the order rests under the master
// ("owned by the master"), none under the delegate, and the delegate needed
// no funds ("Delegated calls are gas-exempt").
//
// Changed from the guide: the URL, MASTER_PRIVATE_KEY (dev account 1), and
// DELEGATE_PRIVATE_KEY (a fresh random key, as the guide's app would make).
// The market is the guide's NVDA-USD perp, id 0x…07 (TestLiveGuides creates it).
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 node guide-delegate-a-trading-key.mjs
import { ethers } from 'ethers'
import { HTTP, KEY1, check, describe, done, guideMarket, ordersOf, poll, same, step } from './guide-steps.mjs'

const provider = new ethers.JsonRpcProvider(HTTP)
const master = new ethers.Wallet(KEY1)
const delegate = new ethers.Wallet(ethers.Wallet.createRandom().privateKey, provider) // fresh app-generated key
const send = (method, params) => provider.send(method, params)

const nvdaPerpId = '0x0000000000000000000000000000000000000000000000000000000000000007' // NVDA-USD perp
await step('market', () => guideMarket(send, nvdaPerpId, 'perpetual', 20))

let chainId
await step('getNetwork', async () => {
  ;({ chainId } = await provider.getNetwork())
  check(chainId === 1293n, `chainId ${chainId}`)
})

const now = BigInt(Date.now()) * 1000n // microseconds

// 1. The master signs the delegation certificate (once, off-chain), valid for one week.
const validUntil = now + 7n * 24n * 3600n * 1_000_000n
let signature
await step('signTypedData', async () => {
  signature = await master.signTypedData(
    { name: 'pod delegation', version: '1', chainId },
    {
      DelegationAuth: [
        { name: 'delegate', type: 'address' },
        { name: 'validUntil', type: 'uint64' },
      ],
    },
    { delegate: delegate.address, validUntil },
  )
  check(ethers.getBytes(signature).length === 65, `signature of ${ethers.getBytes(signature).length} bytes`)
})

// 2. The delegate wraps an order in delegated(...) and sends it with its own key.
const ORDERBOOK = '0x50d0000000000000000000000000000000000002'
const abi = [
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
  'function delegated(address master, uint64 validUntil, bytes signature, bytes inner)',
]
const orderbook = new ethers.Contract(ORDERBOOK, abi, delegate)

const AUCTION_INTERVAL = 500_000n
const deadline = ((now + 10_000_000n + AUCTION_INTERVAL - 1n) / AUCTION_INTERVAL) * AUCTION_INTERVAL // <= validUntil
const ttl = 60n * 1_000_000n

// 5 long at 140 limit, owned by the master.
const inner = orderbook.interface.encodeFunctionData('submitOrder', [
  nvdaPerpId, ethers.parseEther('5'), ethers.parseEther('140'),
  0 /* Limit */, deadline, ttl, 0 /* flags */,
])

let txHash
await step('delegated', async () => {
  const tx = await orderbook.delegated(master.address, validUntil, signature, inner)
  console.error('Delegated order tx:', tx.hash)
  txHash = tx.hash
})

// The order lands by its deadline (10 s ahead): allow 20 s.
await step('order owned by master', async () => {
  check(txHash, 'no delegated transaction was admitted')
  let mine
  await poll(async () => {
    mine = (await ordersOf(send, master.address, nvdaPerpId)).find((o) => same(o.tx_hash, txHash))
    return mine?.status === 'active'
  }, 20_000, () => `the master's order from ${txHash} is ${describe(mine)}, not active`)
  check(same(mine.bidder, master.address), `the order's bidder is ${mine.bidder}, not the master ${master.address}`)
  check(BigInt(mine.initial_size) === ethers.parseEther('5') && mine.side === 'buy' &&
    BigInt(mine.price) === ethers.parseEther('140'), `the order is ${describe(mine)}, the guide sent buy 5 at 140`)
  const theirs = await ordersOf(send, delegate.address, nvdaPerpId)
  check(theirs.length === 0, `the delegate has orders of its own: ${theirs.map(describe).join('; ')}`)
}, 25_000)

await step('delegate unfunded', async () => {
  const balance = await provider.getBalance(delegate.address)
  check(balance === 0n, `the delegate holds ${balance} wei: delegated calls are gas-exempt, it was never funded`)
})

done()
