// From zero to a filled limit order with viem 2: the first dev account buys
// 1 WETH at 2000 USD on WETH/USD, the second sells it.
//
//   npm install viem@2 && LEDGERD_RPC=http://127.0.0.1:8545 node order-viem.mjs
import { createPublicClient, createWalletClient, defineChain, formatEther, http, parseAbi, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const ledgerd = defineChain({
  id: 0x50d, // 1293
  name: 'ledgerd',
  nativeCurrency: { name: 'USD', symbol: 'USD', decimals: 18 },
  rpcUrls: { default: { http: [process.env.LEDGERD_RPC ?? 'http://127.0.0.1:8545'] } },
})
const client = createPublicClient({ chain: ledgerd, transport: http() })
const wallet = createWalletClient({ chain: ledgerd, transport: http() })
// Dev accounts (0) and (1) of `ledgerd --dev`: the standard test mnemonic's first two keys.
const buyer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')
const seller = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d')

// The orderbook is an enshrined contract at a fixed address.
const ORDERBOOK = '0x50d0000000000000000000000000000000000002'
const abi = parseAbi([
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
  'function balanceOf(address token, address account) view returns (int256)',
])
const WETH_USD = '0x0000000000000000000000000000000000000000000000000000000000000001' // market id
const WETH = '0x5000000000000000000000000000000000000001' // its base token; USD is the native token

// Sizes and prices are 18-decimal integers: 1 WETH is 1e18, 2000 USD is 2000e18.
// A positive size buys, a negative one sells.
const size = parseEther('1')
const price = parseEther('2000')
// Orders settle in batch auctions every 500 ms. The deadline is Unix time in
// MICROseconds, a multiple of 500 000: here the auction about 2 s from now.
const deadline = (BigInt(Date.now()) * 1000n / 500_000n + 4n) * 500_000n
const LIMIT = 0
const ttl = 60_000_000n // microseconds: an unfilled order expires after a minute

const wethOf = (account) =>
  client.readContract({ address: ORDERBOOK, abi, functionName: 'balanceOf', args: [WETH, account.address] })
const before = await wethOf(buyer)

// Ordinary transactions: viem fills in nonce, gas and fees.
for (const [account, signedSize] of [[buyer, size], [seller, -size]]) {
  await wallet.writeContract({
    account, address: ORDERBOOK, abi, functionName: 'submitOrder',
    args: [WETH_USD, signedSize, price, LIMIT, deadline, ttl, 0],
  })
}

// Wait until the buyer holds 1 WETH more (fees are charged in USD).
for (let tries = 0; tries < 60; tries++) {
  const bought = (await wethOf(buyer)) - before
  if (bought >= size) {
    console.log(`filled: bought ${formatEther(bought)} WETH at ${formatEther(price)} USD`)
    process.exit(0)
  }
  await new Promise((resolve) => setTimeout(resolve, 250))
}
console.error('the order did not fill within 15 s')
process.exit(1)
