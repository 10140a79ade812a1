// What ethers 6 and viem 2 show their user when the node's rate-limit
// emulation refuses a call (TestRateLimitReachesClients, docs/lab.md,
// "Rate-limit emulation"). For each library in turn it puts a small
// address budget in force with lab_setRateLimits (a --dev node needs no
// token), then reads eth_blockNumber through the library's own request
// path, with its defaults, until a call fails:
//
//   LEDGERD_HTTP=http://127.0.0.1:8545 node ratelimit.mjs
//
// One line per library:
//
//   RATELIMIT {"lib":"ethers","calls":3,"class":"UNKNOWN_ERROR","code":-32005,"message":"rate limit exceeded: address","data":{…},"ms":12}
//
// calls is how many of the user's calls passed before the one that failed;
// class, code, message and data are what the user's code can read from the
// error (ethers: its code and info.error; viem: the error's name, code,
// details and the RPC error's data); ms is how long the failed call took
// (viem retries -32005 before it gives up). Exits 0 unless it crashed.
import { ethers } from 'ethers'
import { createPublicClient, http } from 'viem'

const rpc = process.env.LEDGERD_HTTP ?? 'http://127.0.0.1:8545'
const SPEC = process.env.RATE_LIMIT ?? 'address=3/60s'
const CALLS_MAX = 20

const out = (o) => console.log('RATELIMIT ' + JSON.stringify(o))

// setLimits puts SPEC in force (fresh buckets) with a plain request.
const setLimits = async () => {
  const r = await fetch(rpc, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'lab_setRateLimits', params: [SPEC] }),
  })
  const body = await r.json()
  if (body.error) throw new Error('lab_setRateLimits: ' + JSON.stringify(body.error))
}

// until calls read() until it throws, and reports the error with see().
const until = async (lib, read, see) => {
  await setLimits()
  for (let calls = 0; calls < CALLS_MAX; calls++) {
    const start = Date.now()
    try {
      await read()
    } catch (e) {
      out({ lib, calls, ms: Date.now() - start, ...see(e) })
      return
    }
  }
  out({ lib, calls: CALLS_MAX, class: 'never refused' })
}

// --- ethers 6: JsonRpcProvider with its defaults (a known network, so it
// sends nothing of its own).
const provider = new ethers.JsonRpcProvider(rpc, undefined, { staticNetwork: ethers.Network.from(0x50d) })
await until('ethers', () => provider.send('eth_blockNumber', []), (e) => {
  const err = e?.info?.error ?? e?.error ?? {}
  return { class: e?.code ?? String(e), code: err.code, message: err.message, data: err.data, shown: e?.message }
})
provider.destroy()

// --- viem 2: a public client over http() with its defaults (3 retries).
const client = createPublicClient({ transport: http(rpc) })
await until('viem', () => client.request({ method: 'eth_blockNumber' }), (e) => {
  // The RPC error viem kept, under its own wrapper.
  const rpcErr = e?.walk?.((x) => x?.data !== undefined) ?? e
  return { class: e?.name, code: e?.code, message: e?.details, data: rpcErr?.data, shown: e?.shortMessage }
})
