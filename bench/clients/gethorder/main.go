// Command gethorder fills a limit order with go-ethereum's defaults: dev
// account (0) buys 1 WETH at 2000 USD, dev account (1) sells it, and bind
// (accounts/abi/bind/v2) fills in nonce, fees and gas.
package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	orderbook "github.com/ledgervenue/node/core/clob/abi"
)

var (
	orderbookAddr = common.HexToAddress("0x50d0000000000000000000000000000000000002")
	weth          = common.HexToAddress("0x5000000000000000000000000000000000000001")
	wethUSD       = common.HexToHash("0x01") // the dev WETH/USD orderbook id
	// Prices and sizes are 18-decimal integers: 1 WETH = 1e18, 2000 USD =
	// 2000e18. Sizes are whole lots (0.001 WETH), prices whole ticks (0.01).
	oneWETH = big.NewInt(1e18)
	price   = new(big.Int).Mul(big.NewInt(2000), oneWETH)
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := ethclient.DialContext(ctx, cmp.Or(os.Getenv("LEDGERD_RPC"), "http://127.0.0.1:8545"))
	check(err)
	chainID, err := client.ChainID(ctx) // 0x50d
	check(err)
	ob, err := abi.JSON(strings.NewReader(orderbook.OrderbookJSON))
	check(err)
	book := bind.NewBoundContract(orderbookAddr, ob, client, client, client)

	// Deadlines are µs on the 500 ms auction grid, in the future; ttl is how
	// long the order may rest, µs (0: until filled). orderType 0 = limit, flags 0.
	deadline := big.NewInt((time.Now().UnixMicro()/500_000 + 4) * 500_000)
	ttl := big.NewInt(60_000_000)
	// Dev accounts (0) (buyer, positive size) and (1) (seller, negative
	// size) of the test mnemonic, the keys anvil, hardhat and make run print.
	buyer := transactor(ctx, "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", chainID)
	seller := transactor(ctx, "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d", chainID)
	want := new(big.Int).Add(wethOf(ctx, book, buyer.From), oneWETH)
	_, err = book.Transact(buyer, "submitOrder", wethUSD, oneWETH, price, uint8(0), deadline, ttl, uint8(0))
	check(err)
	_, err = book.Transact(seller, "submitOrder", wethUSD, new(big.Int).Neg(oneWETH), price, uint8(0), deadline, ttl, uint8(0))
	check(err)

	// The auction clears every 500 ms: wait for the buyer's WETH to arrive.
	for wethOf(ctx, book, buyer.From).Cmp(want) < 0 {
		time.Sleep(250 * time.Millisecond)
	}
	fmt.Println("filled: bought 1 WETH at 2000 USD")
}

// transactor signs with key; bind fills in nonce, fees and gas.
func transactor(ctx context.Context, key string, chainID *big.Int) *bind.TransactOpts {
	k, err := crypto.HexToECDSA(key)
	check(err)
	opts := bind.NewKeyedTransactor(k, chainID)
	opts.Context = ctx
	return opts
}

// wethOf reads the orderbook's view balanceOf(token, account) (int256).
func wethOf(ctx context.Context, book *bind.BoundContract, who common.Address) *big.Int {
	var out []any
	check(book.Call(&bind.CallOpts{Context: ctx}, &out, "balanceOf", weth, who))
	return out[0].(*big.Int)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
