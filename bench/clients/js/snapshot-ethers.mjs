// evm_snapshot → orders, a fill and a transfer → evm_revert with ethers 6,
// library defaults only (the calls go through provider.send, as ethers users
// call anvil's): balances, nonces, the book and the orders come back.
// bench/clients/snapshot_test.go runs it against a fresh `ledgerd --dev --compat`.
import { Contract, JsonRpcProvider, Wallet, parseEther } from 'ethers'

const provider = new JsonRpcProvider(process.env.LEDGERD_RPC ?? 'http://127.0.0.1:8545')
const buyer = new Wallet('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80', provider)
const seller = new Wallet('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d', provider)
const payer = new Wallet('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a', provider)
const ORDERBOOK = '0x50d0000000000000000000000000000000000002'
const WETH_USD = '0x0000000000000000000000000000000000000000000000000000000000000001'
const WETH = '0x5000000000000000000000000000000000000001'
const abi = [
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
  'function balanceOf(address token, address account) view returns (int256)',
]
const book = new Contract(ORDERBOOK, abi, provider)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const fail = (msg) => { console.error(msg); process.exit(1) }

async function view() {
  const out = {}
  for (const a of [buyer, seller, payer]) {
    out[a.address] = {
      native: (await provider.getBalance(a.address)).toString(),
      nonce: await provider.getTransactionCount(a.address),
      weth: (await book.balanceOf(WETH, a.address)).toString(),
      orders: await provider.send('ob_getOrders', [a.address, { orderbook_id: WETH_USD }]),
    }
  }
  const ob = await provider.send('ob_getOrderbook', [WETH_USD])
  out.book = { buys: ob.buys, sells: ob.sells }
  return JSON.stringify(out)
}

const before = await view()
const id = await provider.send('evm_snapshot', [])

const deadline = (BigInt(Date.now()) * 1000n / 500_000n + 8n) * 500_000n
// Sent before waiting: ethers polls for receipts every 4 s, longer than the deadline.
const sent = [
  await book.connect(buyer).submitOrder(WETH_USD, parseEther('2'), parseEther('2000'), 0, deadline, 0n, 0),
  await book.connect(seller).submitOrder(WETH_USD, -parseEther('1'), parseEther('2000'), 0, deadline, 0n, 0),
]
sent.push(await payer.sendTransaction({ to: seller.address, value: parseEther('5') }))
for (const tx of sent) await tx.wait()
let changed
for (let tries = 0; tries < 40; tries++) {
  changed = JSON.parse(await view())
  if (changed[buyer.address].weth !== JSON.parse(before)[buyer.address].weth) break
  await sleep(250)
}
if (changed[buyer.address].weth === JSON.parse(before)[buyer.address].weth) fail('the orders did not fill within 10 s')
if (Object.keys(changed.book.buys).length === 0) fail('the rest of the buy is not on the book')

if ((await provider.send('evm_revert', [id])) !== true) fail('evm_revert did not answer true')
// ethers answers a read it made less than 250 ms ago from its cache, on any
// node (anvil's too): wait that out so the reads are fresh.
await sleep(300)
const after = await view()
if (after !== before) fail(`after revert:\n${after}\nwant:\n${before}`)
if ((await provider.send('evm_revert', [id])) !== false) fail('a second evm_revert to the same id did not answer false')

const r = await (await seller.sendTransaction({ to: buyer.address, value: parseEther('1') })).wait()
if (r.status !== 1) fail(`transfer after the revert: status ${r.status}`)
console.log('snapshot-ethers: ok')
