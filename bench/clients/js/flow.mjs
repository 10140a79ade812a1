// What the matrix flows share (see bench/clients/doc.go): the node's
// addresses, the dev accounts, the orderbook's facts, and the step protocol.
// One line per step on stdout, `STEP <name> ok <milliseconds>` or `STEP
// <name> fail <message>`; every step runs even when an earlier one failed.

export const HTTP = process.env.LEDGERD_HTTP ?? 'http://127.0.0.1:8545'
export const WS = process.env.LEDGERD_WS ?? HTTP.replace(/^http/, 'ws')

// Dev accounts 1, 2 and 3: the first three keys of the standard test mnemonic
// (net/node.DevKeys[0..2]).
export const KEY1 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
export const KEY2 = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'
export const KEY3 = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'
export const ORDERBOOK = '0x50d0000000000000000000000000000000000002'
export const WETH = '0x5000000000000000000000000000000000000001'
export const WETH_USD = '0x0000000000000000000000000000000000000000000000000000000000000001'
export const ORDERBOOK_ABI = [
  'function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags)',
  'function balanceOf(address token, address account) view returns (int256)',
]
const AUCTION_US = 500_000n

// nextDeadline is the auction about 2 s from now: µs, on the 500 ms grid.
export function nextDeadline() {
  return (BigInt(Date.now()) * 1000n / AUCTION_US + 4n) * AUCTION_US
}

// A library's background work can fail after its step gave up on it: log it,
// the step already reported.
process.on('unhandledRejection', (err) => console.error('unhandled rejection:', err))
process.on('uncaughtException', (err) => console.error('uncaught exception:', err))

// attempt runs fn with a timeout and never rejects: {ok, ms} (how long it
// took) or {ok: false, msg}.
export async function attempt(fn, ms) {
  const start = performance.now()
  let timer
  const work = Promise.resolve().then(fn)
  work.catch(() => {}) // a late failure after the timeout is not a crash
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)
  })
  try {
    await Promise.race([work, timeout])
    return { ok: true, ms: Math.round(performance.now() - start) }
  } catch (err) {
    return { ok: false, msg: oneLine(err) }
  } finally {
    clearTimeout(timer)
  }
}

// traceRPC writes every JSON-RPC payload an ethers provider sends and
// every answer it gets to stderr, with the milliseconds since start: the
// tests show stderr only when a step failed, and then the trace says which
// request was the last to go out and whether its answer came back.
export function traceRPC(provider) {
  const start = performance.now()
  provider.on('debug', (e) => {
    const what = e.action === 'sendRpcPayload' ? e.payload : (e.result ?? e.error)
    const text = JSON.stringify(what, (_, v) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(what)
    console.error(`${Math.round(performance.now() - start)} ${e.action} ${text.slice(0, 300)}`)
  })
}

export function report(name, outcome) {
  console.log(outcome.ok ? `STEP ${name} ok ${outcome.ms}` : `STEP ${name} fail ${outcome.msg}`)
}

export async function step(name, fn, ms) {
  report(name, await attempt(fn, ms))
}

// oneLine is an error's message on one line, with what each library keeps
// of the node's answer: viem's details, ethers' JSON-RPC error.
function oneLine(err) {
  let msg = [err?.shortMessage ?? err?.message ?? String(err), err?.details].filter(Boolean).join(': ')
  const rpc = err?.error ?? err?.info?.error
  if (rpc?.message) msg += ` (rpc error ${rpc.code}: ${rpc.message}${rpc.data ? ` ${JSON.stringify(rpc.data)}` : ''})`
  return msg.replace(/\s+/g, ' ').slice(0, 300)
}

export function check(cond, msg) {
  if (!cond) throw new Error(msg)
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// poll calls fn until it returns a truthy value or ms ran out; the last
// falsy value's reason comes from why().
export async function poll(fn, ms, why) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error(why())
    await sleep(250)
  }
}

export function same(a, b) {
  return typeof a === 'string' && a.toLowerCase() === b.toLowerCase()
}

// settled polls get() (the library's getTransaction, null while unknown)
// until the transaction names a block, then checks that it moved value
// from → to.
export async function settled(get, from, to, value) {
  let got
  await poll(async () => {
    got = await get()
    return got?.blockNumber != null
  }, 10_000, () => (got ? 'still pending (blockNumber null)' : 'not found'))
  check(same(got.from, from), `from ${got.from}`)
  check(same(got.to, to), `to ${got.to}`)
  check(got.value === value, `value ${got.value}`)
}
