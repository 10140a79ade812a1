// How ethers 6 and viem 2 classify a node's refusals of the usual mistakes
// (TestRefusalClasses, docs/compat.md): a past nonce, a future nonce, no
// funds, a fee cap below the base fee, a tip above the fee cap, a gas limit
// above the cap and below 21000, a wrong chain id. Each mistake goes through
// the library's own send path with its defaults where the library lets it
// reach the node (ethers: Wallet.sendTransaction and JsonRpcSigner's
// eth_sendTransaction; viem: sendTransaction with a local account and with a
// JSON-RPC one); a mistake the library itself refuses before sending (a tip
// above the fee cap, a wrong chain id) is hand-signed and sent with
// broadcastTransaction (ethers) or sendRawTransaction, then classified with
// viem's own getNodeError, what its sendTransaction does with a node's
// refusal.
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 node refusals.mjs
//
// It works against any Ethereum JSON-RPC node with the standard test
// mnemonic's accounts (anvil too). One line per library and mistake:
//
//   REFUSAL {"lib":"ethers","case":"nonceLow","class":"NONCE_EXPIRED","code":-32000,"message":"nonce too low: …","data":"Past nonce: …"}
//
// class is ethers' error code, or the name of the first of viem's node
// errors (errors/node.ts) in the error's chain, else the top error's name;
// "accepted" when the node took the transaction. code, message and data are
// the JSON-RPC error's, as the library kept them. The program exits 0
// unless it crashed.
import { ethers } from 'ethers'
import {
  createPublicClient, createWalletClient, defineChain, http, BaseError, RpcRequestError,
} from 'viem'
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts'
import { getNodeError } from 'viem/utils'

const rpc = process.env.LEDGERD_HTTP ?? 'http://127.0.0.1:8545'
const TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' // dev account (1)
// Dev accounts (5) and (6) of the standard test mnemonic: ethers', viem's.
const ETHERS_KEY = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba'
const VIEM_KEY = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e'
const DEVSIGN = '0x14dC79964da2C08b23698B3D3cc7Ca32193d9955' // dev account (7): the node signs
const STEP_TIMEOUT_MS = 20_000

const out = (o) => console.log('REFUSAL ' + JSON.stringify(o))
// within bounds p by STEP_TIMEOUT_MS; its timer does not keep the program alive.
const within = (p) => Promise.race([p, new Promise((_, reject) =>
  setTimeout(() => reject(new Error(`no answer in ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS).unref())])

// --- ethers 6 ---------------------------------------------------------------

const provider = new ethers.JsonRpcProvider(rpc, undefined, { staticNetwork: true, pollingInterval: 250 })
const chainId = (await provider.getNetwork()).chainId
const wallet = new ethers.Wallet(ETHERS_KEY, provider)

// rawError is the JSON-RPC error object ethers kept (info.error).
const ethersOutcome = async (lib, name, send) => {
  try {
    await within(send())
    out({ lib, case: name, class: 'accepted' })
  } catch (e) {
    const err = e?.info?.error ?? e?.error ?? {}
    out({ lib, case: name, class: e?.code ?? String(e), code: err.code, message: err.message ?? e?.shortMessage, data: err.data })
  }
}

// signRaw signs a type-2 transfer by hand: both libraries refuse to sign a
// tip above the fee cap, and viem a chain id other than its chain's.
const signRaw = (key, t) => {
  const q = (v) => ethers.toBeArray(BigInt(v))
  const fields = [q(t.chainId), q(t.nonce), q(t.tip), q(t.feeCap), q(t.gas), TO, q(1n), '0x', []]
  const sk = new ethers.SigningKey(key)
  const sig = sk.sign(ethers.keccak256(ethers.concat(['0x02', ethers.encodeRlp(fields)])))
  return ethers.concat(['0x02', ethers.encodeRlp([...fields, q(sig.yParity), q(sig.r), q(sig.s)])])
}

const baseFee = (await provider.getBlock('latest')).baseFeePerGas ?? 1_000_000_000n

// nonceAbove waits until read() (an account's nonce) passes nonce: the
// first transfer is in, without the library's receipt wait, which ethers
// cannot do against the spec's shapes (README, "Client compatibility").
const nonceAbove = async (read, nonce) => {
  for (const end = Date.now() + STEP_TIMEOUT_MS; Date.now() < end;) {
    const n = BigInt(await read())
    if (n > BigInt(nonce)) return Number(n)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`the nonce stayed at ${nonce}`)
}

{
  // A first transfer, so that its nonce is a past one.
  const first = await wallet.sendTransaction({ to: TO, value: 1n })
  const next = await nonceAbove(() => provider.getTransactionCount(wallet.address), first.nonce)
  await ethersOutcome('ethers', 'nonceLow', () => wallet.sendTransaction({ to: TO, value: 1n, nonce: next - 1 }))
  await ethersOutcome('ethers', 'nonceHigh', () => wallet.sendTransaction({ to: TO, value: 1n, nonce: next + 5 }))
  const poor = new ethers.Wallet(ethers.Wallet.createRandom().privateKey, provider)
  await ethersOutcome('ethers', 'insufficient', () => poor.sendTransaction({ to: TO, value: ethers.parseEther('1') }))
  await ethersOutcome('ethers', 'underpriced', () =>
    wallet.sendTransaction({ to: TO, value: 1n, nonce: next, gasLimit: 21000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 0n }))
  await ethersOutcome('ethers', 'tipAboveFeeCap', () => provider.broadcastTransaction(
    signRaw(ETHERS_KEY, { chainId, nonce: next, tip: baseFee * 3n, feeCap: baseFee * 2n, gas: 21000n })))
  await ethersOutcome('ethers', 'gasTooHigh', () =>
    wallet.sendTransaction({ to: TO, value: 1n, nonce: next, gasLimit: 40_000_000n }))
  await ethersOutcome('ethers', 'gasTooLow', () =>
    wallet.sendTransaction({ to: TO, value: 1n, nonce: next, gasLimit: 20_000n }))
  await ethersOutcome('ethers', 'chainId', () => provider.broadcastTransaction(
    signRaw(ETHERS_KEY, { chainId: 1n, nonce: next, tip: 0n, feeCap: baseFee * 2n, gas: 21000n })))
  // The node signs (eth_sendTransaction): more than the account holds.
  const signer = await provider.getSigner(DEVSIGN)
  await ethersOutcome('ethers-rpc', 'insufficient', () => signer.sendTransaction({ to: TO, value: ethers.parseEther('1000000') }))
}
provider.destroy()

// --- viem 2 -----------------------------------------------------------------

const chain = defineChain({
  id: Number(chainId), name: 'node', nativeCurrency: { name: 'N', symbol: 'N', decimals: 18 },
  rpcUrls: { default: { http: [rpc] } },
})
const client = createPublicClient({ chain, transport: http() })
const walletClient = createWalletClient({ chain, transport: http() })
const account = privateKeyToAccount(VIEM_KEY)

// viemClass is the first of viem's node errors in err's chain, else its name.
const nodeErrors = new Set(['ExecutionRevertedError', 'FeeCapTooHighError', 'FeeCapTooLowError', 'NonceTooHighError',
  'NonceTooLowError', 'NonceMaxValueError', 'InsufficientFundsError', 'IntrinsicGasTooHighError',
  'IntrinsicGasTooLowError', 'TransactionTypeNotSupportedError', 'TipAboveFeeCapError', 'UnknownNodeError'])
const viemClass = (err) => {
  const hit = err instanceof BaseError ? err.walk((e) => nodeErrors.has(e?.name)) : null
  return hit?.name ?? err?.name ?? String(err)
}
const viemOutcome = async (lib, name, send, classify = (e) => e) => {
  try {
    await within(send())
    out({ lib, case: name, class: 'accepted' })
  } catch (e) {
    const req = e instanceof BaseError ? e.walk((x) => x instanceof RpcRequestError) : null
    out({ lib, case: name, class: viemClass(classify(e)), code: req?.code, message: req?.details, data: req?.data })
  }
}
// What viem's sendTransaction does with a node's refusal of a raw send.
const asSendTransaction = (e) => getNodeError(e, {})

{
  const before = await client.getTransactionCount({ address: account.address })
  await walletClient.sendTransaction({ account, to: TO, value: 1n })
  const next = await nonceAbove(() => client.getTransactionCount({ address: account.address }), before)
  const send = (o) => () => walletClient.sendTransaction({ account, to: TO, value: 1n, ...o })
  await viemOutcome('viem', 'nonceLow', send({ nonce: next - 1 }))
  await viemOutcome('viem', 'nonceHigh', send({ nonce: next + 5 }))
  await viemOutcome('viem', 'insufficient', () =>
    walletClient.sendTransaction({ account: privateKeyToAccount(generatePrivateKey()), to: TO, value: 10n ** 18n }))
  await viemOutcome('viem', 'underpriced', send({ nonce: next, gas: 21000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 0n }))
  await viemOutcome('viem', 'tipAboveFeeCap', () => walletClient.sendRawTransaction({
    serializedTransaction: signRaw(VIEM_KEY, { chainId, nonce: next, tip: baseFee * 3n, feeCap: baseFee * 2n, gas: 21000n }),
  }), asSendTransaction)
  await viemOutcome('viem', 'gasTooHigh', send({ nonce: next, gas: 40_000_000n }))
  await viemOutcome('viem', 'gasTooLow', send({ nonce: next, gas: 20_000n }))
  await viemOutcome('viem', 'chainId', () => walletClient.sendRawTransaction({
    serializedTransaction: signRaw(VIEM_KEY, { chainId: 1n, nonce: next, tip: 0n, feeCap: baseFee * 2n, gas: 21000n }),
  }), asSendTransaction)
  // A raw send as it is: viem's sendRawTransaction classifies nothing.
  await viemOutcome('viem-raw', 'nonceLow', () => walletClient.sendRawTransaction({
    serializedTransaction: signRaw(VIEM_KEY, { chainId, nonce: next - 1, tip: 0n, feeCap: baseFee * 2n, gas: 21000n }),
  }))
  // The node signs (eth_sendTransaction): more than the account holds.
  await viemOutcome('viem-rpc', 'insufficient', () =>
    walletClient.sendTransaction({ account: DEVSIGN, to: TO, value: 10n ** 24n }))
}
