package node

import (
	"crypto/ecdsa"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
)

// DevKeys are the private keys of the first ten accounts of the standard
// test mnemonic "test test test test test test test test test test test junk"
// (path m/44'/60'/0'/0/i): the accounts anvil and hardhat print, so wallets
// and scripts written for those tools work unchanged.
var DevKeys = [10]string{
	"ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
	"59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
	"5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
	"7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
	"47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
	"8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
	"92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
	"4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
	"dbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
	"2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
}

// DevBalanceWei is each dev account's native prefund: 10 000 tokens.
var DevBalanceWei = new(uint256.Int).Mul(uint256.NewInt(10_000), uint256.NewInt(1e18))

// DevKey returns the private key DevKeys[i].
func DevKey(i int) *ecdsa.PrivateKey {
	key, err := crypto.HexToECDSA(DevKeys[i])
	if err != nil {
		panic("BUG: malformed dev key: " + err.Error())
	}
	return key
}

// DevAddress returns the address of DevKeys[i].
func DevAddress(i int) core.Address {
	return core.Address(crypto.PubkeyToAddress(DevKey(i).PublicKey))
}

// Dev tokens: the base tokens of the dev markets, prefunded to every dev
// account (DevTokenBalances).
var (
	DevWETH = core.Address{0x50, 19: 0x01}
	DevWBTC = core.Address{0x50, 19: 0x02}
)

// DevTokenBalances is each dev account's prefund of DevWETH and DevWBTC.
var DevTokenBalances = map[core.Address]*uint256.Int{
	DevWETH: new(uint256.Int).Mul(uint256.NewInt(100), uint256.NewInt(1e18)),
	DevWBTC: new(uint256.Int).Mul(uint256.NewInt(10), uint256.NewInt(1e18)),
}

// DevGenesis prefunds every dev account with DevBalanceWei of the native
// token and the DevTokenBalances of the dev markets' base tokens.
func DevGenesis() []Alloc {
	out := make([]Alloc, 0, 3*len(DevKeys))
	for i := range DevKeys {
		a := DevAddress(i)
		out = append(out, Alloc{Token: core.NativeToken, Account: a, Amount: *DevBalanceWei},
			Alloc{Token: DevWETH, Account: a, Amount: *DevTokenBalances[DevWETH]},
			Alloc{Token: DevWBTC, Account: a, Amount: *DevTokenBalances[DevWBTC]})
	}
	return out
}

// DevMarkets are the spot markets of dev mode, quoted in the native token
// ("USD"), auctioned every 500 ms:
//
//	id 0x…01  WETH/USD  price step 0.01, lot 0.001 WETH, maker 0.01 %, taker 0.03 %
//	id 0x…02  WBTC/USD  price step 1,    lot 0.0001 WBTC, maker 0,     taker 0.05 %
func DevMarkets() []clob.MarketConfig {
	native := clob.Address(core.NativeToken)
	return []clob.MarketConfig{{
		ID: clob.Hash{31: 1}, Name: "WETH/USD", BaseSymbol: "WETH", QuoteSymbol: "USD",
		Base: clob.Address(DevWETH), Quote: native, IntervalUs: 500_000,
		TickPrecision: *uint256.NewInt(1e16), LotSize: *uint256.NewInt(1e15),
		MakerFee: *uint256.NewInt(1e14), TakerFee: *uint256.NewInt(3e14),
	}, {
		ID: clob.Hash{31: 2}, Name: "WBTC/USD", BaseSymbol: "WBTC", QuoteSymbol: "USD",
		Base: clob.Address(DevWBTC), Quote: native, IntervalUs: 500_000,
		TickPrecision: *uint256.NewInt(1e18), LotSize: *uint256.NewInt(1e14),
		TakerFee: *uint256.NewInt(5e14),
	}}
}

// Synthetic base addresses of the dev perp markets: no balance ever holds
// them (a perp fill moves no token, docs/perps.md).
var (
	DevETHPerpBase = core.Address{0x50, 0xfe, 19: 0x03}
	DevBTCPerpBase = core.Address{0x50, 0xfe, 19: 0x04}
)

// DevPerpMarkets are the perpetual markets of dev mode, collateralised in the
// native token, auctioned every 500 ms, their oracles walking from a fixed
// seed (so a replay walks the same way) by 2 basis points per tick until
// admin_setOraclePrice freezes them:
//
//	id 0x…03  ETH-PERP  price step 0.01, lot 0.001, max leverage 20, oracle from 3000
//	id 0x…04  BTC-PERP  price step 1,    lot 0.0001, max leverage 10, oracle from 60000
//
// Both: funding interest 0.01 % and cap 32 % per 8 h, mark premium cap
// 0.5 % of the oracle, mark moves at most 1 % per tick, fees as the spot
// markets of the same base.
func DevPerpMarkets() []clob.MarketConfig {
	native := clob.Address(core.NativeToken)
	perp := func(leverage uint32, oracle *uint256.Int, seed uint64) clob.PerpParams {
		return clob.PerpParams{MaxLeverage: leverage, InterestRate: *uint256.NewInt(1e14), MaxFundingRate: *uint256.NewInt(32e16),
			MaxPremium: *uint256.NewInt(5e15), MarkClamp: *uint256.NewInt(1e16), OraclePrice: *oracle, WalkBps: 2, WalkSeed: seed}
	}
	return []clob.MarketConfig{{
		ID: clob.Hash{31: 3}, Name: "ETH-PERP", BaseSymbol: "ETH", QuoteSymbol: "USD", Kind: clob.Perp,
		Base: clob.Address(DevETHPerpBase), Quote: native, IntervalUs: 500_000,
		TickPrecision: *uint256.NewInt(1e16), LotSize: *uint256.NewInt(1e15),
		MakerFee: *uint256.NewInt(1e14), TakerFee: *uint256.NewInt(3e14),
		Perp: perp(20, wei(3_000), 0xe7e7_0001),
	}, {
		ID: clob.Hash{31: 4}, Name: "BTC-PERP", BaseSymbol: "BTC", QuoteSymbol: "USD", Kind: clob.Perp,
		Base: clob.Address(DevBTCPerpBase), Quote: native, IntervalUs: 500_000,
		TickPrecision: *uint256.NewInt(1e18), LotSize: *uint256.NewInt(1e14),
		TakerFee: *uint256.NewInt(5e14),
		Perp:     perp(10, wei(60_000), 0xb7c0_0002),
	}}
}

// wei returns whole units of an 18-decimal amount.
func wei(units uint64) *uint256.Int {
	return new(uint256.Int).Mul(uint256.NewInt(units), uint256.NewInt(1e18))
}

// DevBridgeConfig is the default bridge configuration (docs/bridge.md §1):
// anvil's chain id, and the addresses of the contracts dev account 0
// deploys first on a fresh anvil (the bridge at nonce 0, then one token per
// bridged ledger token), so that a bridged chain set up that way matches it
// with no flag.
func DevBridgeConfig() core.BridgeConfig {
	pow := func(e uint64) uint256.Int { return *new(uint256.Int).Exp(uint256.NewInt(10), uint256.NewInt(e)) }
	return core.BridgeConfig{
		ClaimChainID:   31337,
		SourceContract: core.Address(common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")),
		Version:        1,
		Tokens: []core.BridgeToken{
			{Token: core.NativeToken, L1Token: core.Address(common.HexToAddress("0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512")),
				Decimals: 6, Min: pow(6), Max: pow(12)},
			{Token: DevWETH, L1Token: core.Address(common.HexToAddress("0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0")),
				Decimals: 18, Min: pow(15), Max: pow(24)},
			{Token: DevWBTC, L1Token: core.Address(common.HexToAddress("0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9")),
				Decimals: 8, Min: pow(4), Max: pow(10)},
		},
	}
}
