// A leveraged long on a perpetual market with ethers 6: dev account (2) buys
// 1 ETH of ETH-PERP near the mark, dev account (3) sells it, and the long's
// position, margin and withdrawable balance are read back.
//
//   npm install ethers@6 && LEDGERD_RPC=http://127.0.0.1:8545 node perp-ethers.mjs
import { ethers } from 'ethers'

const provider = new ethers.JsonRpcProvider(process.env.LEDGERD_RPC ?? 'http://127.0.0.1:8545')
// Dev accounts (2) and (3) of `ledgerd --dev`: the standard test mnemonic's keys.
const long = new ethers.Wallet('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a', provider)
const short = new ethers.Wallet('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6', provider)

const ORDERBOOK = '0x50d0000000000000000000000000000000000002'
const ABI = [
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
]
const ETH_PERP = '0x0000000000000000000000000000000000000000000000000000000000000003'

// The mark moves every auction (the dev oracle walks): read it, and cross
// 1 % on either side of it, on the market's price grid.
const market = (await provider.send('ob_getMarkets', [])).find((m) => m.id === ETH_PERP)
const mark = BigInt(market.mark_price)
const step = BigInt(market.tick_precision)
const onGrid = (p) => (p / step) * step
const size = ethers.parseEther('1') // positive: long
const deadline = (BigInt(Date.now()) * 1000n / 500_000n + 4n) * 500_000n // µs, on the 500 ms grid
const LIMIT = 0
const ttl = 60_000_000n

// A perp order locks nothing: it needs initial margin (notional / max leverage)
// out of the account's equity, in the native collateral.
const book = new ethers.Contract(ORDERBOOK, ABI, provider)
await book.connect(long).submitOrder(ETH_PERP, size, onGrid(mark * 101n / 100n), LIMIT, deadline, ttl, 0)
await book.connect(short).submitOrder(ETH_PERP, -size, onGrid(mark * 99n / 100n), LIMIT, deadline, ttl, 0)

for (let tries = 0; tries < 60; tries++) {
  const { positions, perps_equity: equity } = await provider.send('ob_getPositions', [long.address])
  const p = positions.find((x) => x.kind === 'perp' && x.orderbook_id === ETH_PERP)
  if (p) {
    const withdrawable = await provider.getBalance(long.address) // equity minus initial margin
    console.log(`position: ${p.side} ${ethers.formatEther(p.size)} ETH at ${ethers.formatEther(BigInt(p.entry_price))}, ` +
      `mark ${ethers.formatEther(BigInt(p.mark_price))}, unrealized ${ethers.formatEther(p.unrealized_pnl)} USD, ` +
      `equity ${ethers.formatEther(equity)}, withdrawable ${ethers.formatEther(withdrawable)} USD`)
    process.exit(0)
  }
  await new Promise((resolve) => setTimeout(resolve, 250))
}
console.error('the perp order did not fill within 15 s')
process.exit(1)
