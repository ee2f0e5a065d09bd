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
	if meant := networksMeant(name); len(meant) > 0 {
		return nil, badInput("--network %q: want one of %s (did you mean %s?)", name, networkNames(), strings.Join(meant, " or "))
	}
	return nil, badInput("--network %q: want one of %s", name, networkNames())
}

// networkAliases are the other names the networks go by (Bitcoin Core's
// chain names main, test and regtest among them).
var networkAliases = map[string]string{"main": "mainnet", "bitcoin": "mainnet", "btc": "mainnet", "regression": "regtest"}

// networksMeant lists the networks an unknown --network name probably
// means: the name in other case, an alias, or the beginning of names.
func networksMeant(name string) []string {
	lower := strings.ToLower(strings.TrimSpace(name))
	if alias, ok := networkAliases[lower]; ok {
		return []string{alias}
	}
	var meant []string
	for _, n := range knownNetworks {
		if n.name == lower {
			return []string{n.name}
		}
		if lower != "" && strings.HasPrefix(n.name, lower) {
			meant = append(meant, n.name)
		}
	}
	return meant
}
