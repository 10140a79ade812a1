#!/usr/bin/env bash
# A short tour of the API with curl against make run. Every POST outside
# /v1/ is JSON-RPC (single or batch; the path is cosmetic; /v1/bridge/… is
# the bridge's REST surface, GET only). Each call is followed
# by the answer a fresh dev node gives ("…" ends an answer shown in part);
# bench/clients checks them.
set -euo pipefail
rpc() { curl -sSf "${LEDGERD_RPC:-http://127.0.0.1:8545}" -d "$1"; echo; }

rpc '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}'
# {"jsonrpc":"2.0","id":1,"result":"0x50d"}
rpc '{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266","latest"]}'
# {"jsonrpc":"2.0","id":2,"result":"0x21e19e0c9bab2400000"}
# The orderbook's view balanceOf(WETH, account (0)): 100 WETH, 18 decimals.
rpc '{"jsonrpc":"2.0","id":3,"method":"eth_call","params":[{"to":"0x50d0000000000000000000000000000000000002","data":"0xf7888aec0000000000000000000000005000000000000000000000000000000000000001000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266"},"latest"]}'
# {"jsonrpc":"2.0","id":3,"result":"0x0000000000000000000000000000000000000000000000056bc75e2d63100000"}
rpc '{"jsonrpc":"2.0","id":4,"method":"svc_getCommittee"}'
# {"jsonrpc":"2.0","id":4,"result":{"quorum_size":3,"replicas":[…
