package main

import (
	"strings"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/peer/chain"
)

// knownNetworks is the one list of --network names every command accepts,
// in the order help texts show them. Adding a network is one line here.
var knownNetworks = []struct {
	name   string
	params *chaincfg.Params
}{
	{"mainnet", &chaincfg.MainNetParams},
	{"testnet3", &chaincfg.TestNet3Params},
	{"testnet4", &chain.TestNet4Params},
	{"signet", &chaincfg.SigNetParams},
	{"simnet", &chaincfg.SimNetParams},
	{"regtest", &chaincfg.RegressionNetParams},
}

// networkNames lists the accepted --network names, comma-separated, for
// help texts and errors.
func networkNames() string {
	return strings.Join(networkList(), ", ")
}

// networkList lists the accepted --network names.
func networkList() []string {
	names := make([]string, len(knownNetworks))
	for i, n := range knownNetworks {
		names[i] = n.name
	}
	return names
}

// lookupNetwork returns the parameters of a --network name; an unknown
// name is bad input listing the valid ones.
func lookupNetwork(name string) (*chaincfg.Params, error) {
	for _, n := range knownNetworks {
		if n.name == name {
			return n.params, nil
		}
	}
	if name == "testnet" {
		return nil, badInput("--network %q: want one of %s (testnet is testnet3 or testnet4)", name, networkNames())
	}
	return nil, badInput("--network %q: want one of %s", name, networkNames())
}
