// viem 2's wallet client with a JSON-RPC account against `ledgerd --dev`:
// the node's dev accounts sign (docs/signing.md). Library defaults only: no
// hand-set gas, fees or nonces, no keys in the client. Steps as the matrix
// flows print them (flow.mjs); bench/clients/devsign_test.go runs it.
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 node devsign-viem.mjs
import { createPublicClient, createWalletClient, defineChain, http, parseAbi, parseEther, verifyMessage, verifyTypedData } from 'viem'

import { HTTP, ORDERBOOK, WETH_USD, ORDERBOOK_ABI, nextDeadline, step, check, same, settled } from './flow.mjs'
import { ACCOUNT1, ACCOUNT3, DEV_ACCOUNTS, MESSAGE, DOMAIN, TYPES, MAIL } from './devsign.mjs'

const ledgerd = defineChain({
  id: 1293, name: 'ledgerd', nativeCurrency: { name: 'USD', symbol: 'USD', decimals: 18 },
  rpcUrls: { default: { http: [HTTP] } },
})
const client = createPublicClient({ chain: ledgerd, transport: http() })
// A JSON-RPC account: an address, the node signs.
const wallet = createWalletClient({ account: ACCOUNT1, chain: ledgerd, transport: http() })

await step('accounts', async () => {
  const accounts = await wallet.getAddresses()
  check(accounts.length === DEV_ACCOUNTS, `${accounts.length} accounts`)
  check(same(accounts[0], ACCOUNT1), `first ${accounts[0]}`)
}, 5_000)

const value = parseEther('0.25')
await step('sendTransaction', async () => {
  const hash = await wallet.sendTransaction({ to: ACCOUNT3, value })
  const receipt = await client.waitForTransactionReceipt({ hash })
  check(receipt.status === 'success', `status ${receipt.status}`)
  await settled(() => client.getTransaction({ hash }), ACCOUNT1, ACCOUNT3, value)
}, 15_000)

await step('order', async () => {
  const hash = await wallet.writeContract({
    address: ORDERBOOK, abi: parseAbi(ORDERBOOK_ABI), functionName: 'submitOrder',
    args: [WETH_USD, parseEther('0.01'), parseEther('1000'), 0, nextDeadline(), 60_000_000n, 0],
  })
  const receipt = await client.waitForTransactionReceipt({ hash })
  check(receipt.status === 'success', `status ${receipt.status}`)
  check(receipt.logs.length > 0, 'no log')
}, 15_000)

await step('signMessage', async () => {
  const signature = await wallet.signMessage({ message: MESSAGE })
  check(await verifyMessage({ address: ACCOUNT1, message: MESSAGE, signature }), 'does not verify')
}, 5_000)

await step('signTypedData', async () => {
  const signature = await wallet.signTypedData({ domain: DOMAIN, types: TYPES, primaryType: 'Mail', message: MAIL })
  check(await verifyTypedData({ address: ACCOUNT1, domain: DOMAIN, types: TYPES, primaryType: 'Mail', message: MAIL, signature }),
    'does not verify')
}, 5_000)

process.exit(0)
