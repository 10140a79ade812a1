#!/usr/bin/env bash
# Testing a strategy, end to end: the built-in bots make a market from a
# scenario file, a strategy (bench/clients/js/mm-ethers.mjs) quotes into
# it through an injected fault, and the report says what it earned and
# why, live and then offline from the session's directory. Run it from
# anywhere after `make build` (LEDGERD names another binary, LEDGERD_ADDR
# another address); bench/clients runs it in `make test`.
set -euo pipefail
cd "$(dirname "$0")/../.."                       # the repository's root
LEDGERD=${LEDGERD:-./bin/ledgerd}
ADDR=${LEDGERD_ADDR:-127.0.0.1:8545}
MM=0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC    # dev account (2): the strategy's
DIR=$(mktemp -d)                                  # each play needs an empty data directory
rpc() { curl -sSf "http://$ADDR" -d "$1"; echo; }

# 1. The venue plays docs/scenarios/crash.json at pace 1 (real time): two
#    makers and two takers trade ETH-PERP and WETH/USD, ETH-PERP's oracle
#    crashes from 2000 to 1700 at 20 s while two auctions are skipped, its
#    feed gaps for 5 s at 35 s. The same seed plays the same market.
"$LEDGERD" --dev --compat --addr "$ADDR" --datadir "$DIR/node" --scenario docs/scenarios/crash.json > "$DIR/ledgerd.log" 2>&1 &
NODE=$!
trap 'kill $NODE 2> /dev/null && wait $NODE; rm -rf "$DIR"' EXIT
until curl -sf "http://$ADDR" -d '{"jsonrpc":"2.0","id":0,"method":"lab_scenario"}' > /dev/null; do sleep 0.2; done

# 2. A fault for the strategy: every answer to its connection comes 150 ms
#    late (the connection is tied to the account once it sends).
rpc '{"jsonrpc":"2.0","id":1,"method":"lab_setLatency","params":[{"scope":"account","account":"'$MM'","answers":{"ms":150}}]}'
# {"jsonrpc":"2.0","id":1,"result":"0x1"}

# 3. The strategy quotes WETH/USD once a second of the scenario's time, 20
#    times, over WebSocket; it prints the median answer time it saw.
LEDGERD_RPC=ws://$ADDR MM_ROUNDS=20 node bench/clients/js/mm-ethers.mjs
# {"account":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","rounds":20,…

# 4. The scenario plays to 60 s; then the venue's time stands still.
until rpc '{"jsonrpc":"2.0","id":2,"method":"lab_scenario"}' | grep -q '"state":"done"'; do sleep 1; done
rpc '{"jsonrpc":"2.0","id":3,"method":"lab_scenario"}'
# {"jsonrpc":"2.0","id":3,"result":{"name":"crash","state":"done",…

# 5. The report, live: the PnL split (spread capture, fees, funding,
#    inventory), fills, markouts; as CSV per market; and the JSON kept.
rpc '{"jsonrpc":"2.0","id":4,"method":"lab_strategyReport","params":[{"account":"'$MM'"}]}'
# {"jsonrpc":"2.0","id":4,"result":{"account":"0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",…
curl -sSf "http://$ADDR/v1/lab/report/$MM?format=csv" > "$DIR/report.csv"
echo "{\"csv\":\"$(head -1 "$DIR/report.csv")\"}"
# {"csv":"market,…
curl -sSf "http://$ADDR/v1/lab/report/$MM" > "$DIR/live.json"

# 6. Stop the venue; the same report offline, from its directory alone.
kill -INT $NODE && wait $NODE || true
"$LEDGERD" replay --datadir "$DIR/node" --report $MM > "$DIR/offline.json"
cmp <(cat "$DIR/live.json"; echo) "$DIR/offline.json" && echo '{"offline report":"the live one, byte for byte"}'
# {"offline report":"the live one, byte for byte"}
