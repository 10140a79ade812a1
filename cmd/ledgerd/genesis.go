package main

import (
	"flag"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// genesisFlags are the flags that choose a node's genesis, shared by the
// node and `ledgerd replay` (which needs them for a data directory that
// stores no genesis description), so the two cannot disagree on a default.
type genesisFlags struct {
	dev                             bool
	validators, withdrawalsPerBatch int
	seed                            string
	baseFee                         uint64
}

// register defines the genesis flags on fs; prefix starts each help text.
func (g *genesisFlags) register(fs *flag.FlagSet, prefix string) {
	fs.BoolVar(&g.dev, "dev", false, prefix+"dev mode: prefund the ten standard test-mnemonic accounts and allow the Mint faucet (docs/faucet.md)")
	fs.IntVar(&g.validators, "validators", 4, prefix+"simulated committee size")
	fs.StringVar(&g.seed, "committee-seed", "ledgerd committee", prefix+"seed the validator keys derive from")
	fs.Uint64Var(&g.baseFee, "base-fee", 1_000_000_000, prefix+"initial base fee per gas, wei")
	fs.IntVar(&g.withdrawalsPerBatch, "withdrawals-per-batch", core.DefaultWithdrawalsPerBatchMax,
		prefix+"withdrawals one withdrawal batch executes; the rest are refused not_included (part of the genesis: keep it across restarts of one data directory)")
}

// config is the genesis part of a node's configuration.
func (g *genesisFlags) config() node.Config {
	cfg := node.Config{ChainID: ChainID, BaseFee: *uint256.NewInt(g.baseFee), Validators: g.validators,
		CommitteeSeed: []byte(g.seed), Bridge: node.DevBridgeConfig(), WithdrawalsPerBatchMax: g.withdrawalsPerBatch}
	if g.dev {
		cfg.Genesis = node.DevGenesis()
		cfg.Markets = append(node.DevMarkets(), node.DevPerpMarkets()...)
		cfg.MintAllowed = true
	}
	return cfg
}
