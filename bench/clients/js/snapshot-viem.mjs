// evm_snapshot → orders, a fill and a transfer → evm_revert with viem 2's
// test client (mode 'anvil'), library defaults only: balances, nonces, the
// book and the orders come back. bench/clients/snapshot_test.go runs it
// against a fresh `ledgerd --dev --compat`.
import { createPublicClient, createTestClient, createWalletClient, defineChain, http, parseAbi, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const ledgerd = defineChain({
  id: 0x50d,
  name: 'ledgerd',
  nativeCurrency: { name: 'USD', symbol: 'USD', decimals: 18 },
  rpcUrls: { default: { http: [process.env.LEDGERD_RPC ?? 'http://127.0.0.1:8545'] } },
})
const client = createPublicClient({ chain: ledgerd, transport: http() })
const wallet = createWalletClient({ chain: ledgerd, transport: http() })
const test = createTestClient({ chain: ledgerd, mode: 'anvil', transport: http() })
const buyer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')
const seller = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d')
const ORDERBOOK = '0x50d0000000000000000000000000000000000002'
const WETH_USD = '0x0000000000000000000000000000000000000000000000000000000000000001'
const WETH = '0x5000000000000000000000000000000000000001'
const abi = parseAbi([
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
  'function balanceOf(address token, address account) view returns (int256)',
])
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const fail = (msg) => { console.error(msg); process.exit(1) }

// What a client sees of the venue.
async function view() {
  const out = {}
  for (const a of [buyer, seller]) {
    out[a.address] = {
      native: (await client.getBalance({ address: a.address })).toString(),
      nonce: await client.getTransactionCount({ address: a.address }),
      weth: (await client.readContract({ address: ORDERBOOK, abi, functionName: 'balanceOf', args: [WETH, a.address] })).toString(),
      orders: await client.request({ method: 'ob_getOrders', params: [a.address, { orderbook_id: WETH_USD }] }),
    }
  }
  const book = await client.request({ method: 'ob_getOrderbook', params: [WETH_USD] })
  out.book = { buys: book.buys, sells: book.sells }
  return JSON.stringify(out)
}

const before = await view()
const id = await test.snapshot()
if (typeof id !== 'string' || !id.startsWith('0x')) fail(`snapshot id ${id}`)

// A resting buy, a crossing sell of half of it, and a transfer.
const deadline = (BigInt(Date.now()) * 1000n / 500_000n + 8n) * 500_000n
await wallet.writeContract({ account: buyer, address: ORDERBOOK, abi, functionName: 'submitOrder',
  args: [WETH_USD, parseEther('2'), parseEther('2000'), 0, deadline, 0n, 0] })
await wallet.writeContract({ account: seller, address: ORDERBOOK, abi, functionName: 'submitOrder',
  args: [WETH_USD, -parseEther('1'), parseEther('2000'), 0, deadline, 0n, 0] })
const hash = await wallet.sendTransaction({ account: seller, to: buyer.address, value: parseEther('5') })
await client.waitForTransactionReceipt({ hash })
let changed
for (let tries = 0; tries < 40; tries++) {
  changed = JSON.parse(await view())
  if (changed[buyer.address].weth !== JSON.parse(before)[buyer.address].weth) break
  await sleep(250)
}
if (changed[buyer.address].weth === JSON.parse(before)[buyer.address].weth) fail('the orders did not fill within 10 s')
if (Object.keys(changed.book.buys).length === 0) fail('the rest of the buy is not on the book')

await test.revert({ id })
const after = await view()
if (after !== before) fail(`after revert:\n${after}\nwant:\n${before}`)

// The venue goes on from the snapshot: the nonces are free again.
const again = await wallet.sendTransaction({ account: seller, to: buyer.address, value: parseEther('1') })
const r = await client.waitForTransactionReceipt({ hash: again })
if (r.status !== 'success') fail(`transfer after the revert: ${r.status}`)
console.log('snapshot-viem: ok')
