// A leveraged long on a perpetual market with viem 2: dev account (2) buys
// 1 ETH of ETH-PERP near the mark, dev account (3) sells it, and the long's
// position, margin and withdrawable balance are read back.
//
//   npm install viem@2 && LEDGERD_RPC=http://127.0.0.1:8545 node perp-viem.mjs
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
// Dev accounts (2) and (3) of `ledgerd --dev`: the standard test mnemonic's keys.
const long = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a')
const short = privateKeyToAccount('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6')

const ORDERBOOK = '0x50d0000000000000000000000000000000000002'
const abi = parseAbi([
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
])
const ETH_PERP = '0x0000000000000000000000000000000000000000000000000000000000000003'

// The mark moves every auction (the dev oracle walks): read it, and cross
// 1 % on either side of it, on the market's price grid.
const market = (await client.request({ method: 'ob_getMarkets', params: [] })).find((m) => m.id === ETH_PERP)
const mark = BigInt(market.mark_price)
const step = BigInt(market.tick_precision)
const onGrid = (p) => (p / step) * step
const size = parseEther('1') // positive: long
const deadline = (BigInt(Date.now()) * 1000n / 500_000n + 4n) * 500_000n // µs, on the 500 ms grid
const LIMIT = 0
const ttl = 60_000_000n

// A perp order locks nothing: it needs initial margin (notional / max leverage)
// out of the account's equity, in the native collateral.
for (const [account, signedSize, price] of [[long, size, onGrid(mark * 101n / 100n)], [short, -size, onGrid(mark * 99n / 100n)]]) {
  await wallet.writeContract({
    account, address: ORDERBOOK, abi, functionName: 'submitOrder',
    args: [ETH_PERP, signedSize, price, LIMIT, deadline, ttl, 0],
  })
}

for (let tries = 0; tries < 60; tries++) {
  const { positions, perps_equity: equity } = await client.request({ method: 'ob_getPositions', params: [long.address] })
  const p = positions.find((x) => x.kind === 'perp' && x.orderbook_id === ETH_PERP)
  if (p) {
    const withdrawable = await client.getBalance({ address: long.address }) // equity minus initial margin
    console.log(`position: ${p.side} ${formatEther(BigInt(p.size))} ETH at ${formatEther(BigInt(p.entry_price))}, ` +
      `mark ${formatEther(BigInt(p.mark_price))}, unrealized ${formatEther(BigInt(p.unrealized_pnl))} USD, ` +
      `equity ${formatEther(BigInt(equity))}, withdrawable ${formatEther(withdrawable)} USD`)
    process.exit(0)
  }
  await new Promise((resolve) => setTimeout(resolve, 250))
}
console.error('the perp order did not fill within 15 s')
process.exit(1)
