// From zero to a filled limit order with ethers 6: the first dev account buys
// 1 WETH at 2000 USD on WETH/USD, the second sells it.
//
//   npm install ethers@6 && LEDGERD_RPC=http://127.0.0.1:8545 node order-ethers.mjs
import { ethers } from 'ethers'

const provider = new ethers.JsonRpcProvider(process.env.LEDGERD_RPC ?? 'http://127.0.0.1:8545')
// Dev accounts (0) and (1) of `ledgerd --dev`: the standard test mnemonic's first two keys.
const buyer = new ethers.Wallet('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80', provider)
const seller = new ethers.Wallet('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d', provider)

// The orderbook is an enshrined contract at a fixed address.
const ORDERBOOK = '0x50d0000000000000000000000000000000000002'
const ABI = [
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
  'function balanceOf(address token, address account) view returns (int256)',
]
const WETH_USD = '0x0000000000000000000000000000000000000000000000000000000000000001' // market id
const WETH = '0x5000000000000000000000000000000000000001' // its base token; USD is the native token

// Sizes and prices are 18-decimal integers: 1 WETH is 1e18, 2000 USD is 2000e18.
// A positive size buys, a negative one sells.
const size = ethers.parseEther('1')
const price = ethers.parseEther('2000')
// Orders settle in batch auctions every 500 ms. The deadline is Unix time in
// MICROseconds, a multiple of 500 000: here the auction about 2 s from now.
const deadline = (BigInt(Date.now()) * 1000n / 500_000n + 4n) * 500_000n
const LIMIT = 0
const ttl = 60_000_000n // microseconds: an unfilled order expires after a minute

const book = new ethers.Contract(ORDERBOOK, ABI, provider)
const before = await book.balanceOf(WETH, buyer.address)

// Ordinary transactions: ethers fills in nonce, gas and fees.
await book.connect(buyer).submitOrder(WETH_USD, size, price, LIMIT, deadline, ttl, 0)
await book.connect(seller).submitOrder(WETH_USD, -size, price, LIMIT, deadline, ttl, 0)

// Wait until the buyer holds 1 WETH more (fees are charged in USD).
for (let tries = 0; tries < 60; tries++) {
  const bought = (await book.balanceOf(WETH, buyer.address)) - before
  if (bought >= size) {
    console.log(`filled: bought ${ethers.formatEther(bought)} WETH at ${ethers.formatEther(price)} USD`)
    process.exit(0)
  }
  await new Promise((resolve) => setTimeout(resolve, 250))
}
console.error('the order did not fill within 15 s')
process.exit(1)
