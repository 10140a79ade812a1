// ethers 6's JsonRpcSigner against `ledgerd --dev`: the node's dev accounts
// sign (docs/signing.md). Library defaults only: no hand-set gas, fees or
// nonces, no keys in the client. Steps as the matrix flows print them
// (flow.mjs); bench/clients/devsign_test.go runs it.
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 node devsign-ethers.mjs
import { ethers } from 'ethers'

import { HTTP, ORDERBOOK, WETH_USD, ORDERBOOK_ABI, nextDeadline, step, check, same, settled, traceRPC } from './flow.mjs'
import { ACCOUNT1, ACCOUNT3, DEV_ACCOUNTS, MESSAGE, DOMAIN, TYPES, MAIL } from './devsign.mjs'

const provider = new ethers.JsonRpcProvider(HTTP)
traceRPC(provider)
let signer

await step('accounts', async () => {
  const accounts = await provider.listAccounts()
  check(accounts.length === DEV_ACCOUNTS, `${accounts.length} accounts`)
  signer = await provider.getSigner() // eth_accounts' first
  check(same(signer.address, ACCOUNT1), `signer ${signer.address}`)
}, 5_000)

const value = ethers.parseEther('0.25')
await step('sendTransaction', async () => {
  const tx = await signer.sendTransaction({ to: ACCOUNT3, value })
  const receipt = await tx.wait()
  check(receipt?.status === 1, `status ${receipt?.status}`)
  await settled(() => provider.getTransaction(tx.hash), ACCOUNT1, ACCOUNT3, value)
}, 15_000)

await step('order', async () => {
  const book = new ethers.Contract(ORDERBOOK, ORDERBOOK_ABI, signer)
  const tx = await book.submitOrder(WETH_USD, ethers.parseEther('0.01'), ethers.parseEther('1000'), 0, nextDeadline(), 60_000_000n, 0)
  const receipt = await tx.wait()
  check(receipt?.status === 1, `status ${receipt?.status}`)
  check(receipt.logs.length > 0, 'no log')
}, 15_000)

await step('signMessage', async () => {
  const sig = await signer.signMessage(MESSAGE)
  check(same(ethers.verifyMessage(MESSAGE, sig), ACCOUNT1), 'recovers to another address')
}, 5_000)

await step('signTypedData', async () => {
  const sig = await signer.signTypedData(DOMAIN, TYPES, MAIL)
  check(same(ethers.verifyTypedData(DOMAIN, TYPES, MAIL, sig), ACCOUNT1), 'recovers to another address')
}, 5_000)

provider.destroy()
process.exit(0)
