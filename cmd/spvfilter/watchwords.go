package main

import (
	"fmt"
	"regexp"
	"strings"
)

// extendedKeyPrefixes are the BIP 32 (and SLIP 132) prefixes of extended
// keys, public and private.
var extendedKeyPrefixes = map[string]bool{
	"xpub": true, "ypub": true, "zpub": true, "Ypub": true, "Zpub": true,
	"tpub": true, "upub": true, "vpub": true, "Upub": true, "Vpub": true,
	"xprv": false, "yprv": false, "zprv": false, "Yprv": false, "Zprv": false,
	"tprv": false, "uprv": false, "vprv": false, "Uprv": false, "Vprv": false,
}

// descriptor matches the start of an output descriptor: wpkh(, tr(, sh(.
var descriptor = regexp.MustCompile(`^[a-z]+\(`)

// notWatchable says why v, a watch item that is no address of the
// network, is not a hex output script either but what a newcomer may
// take for a watch item: an extended key or an output descriptor (a
// public key in hex is an address of every network, watched as its P2PK
// script). "" when it is none of them. A private key is not repeated.
func notWatchable(v string) string {
	if len(v) > 100 {
		if public, ok := extendedKeyPrefixes[v[:4]]; ok {
			if !public {
				return "an extended private key, which scan never needs (keep it out of command lines): give the addresses the wallet derives from its public key, one per line with @FILE"
			}
			return fmt.Sprintf("%s... is an extended public key: scan watches addresses, output scripts and outpoints, not keys to derive from: give the addresses the wallet derives from it, one per line with @FILE", v[:12])
		}
	}
	if descriptor.MatchString(v) {
		name, _, _ := strings.Cut(v, "(")
		return fmt.Sprintf("%s(...) is an output descriptor: give the addresses or scripts it derives (bitcoin-cli deriveaddresses prints them), one per line with @FILE", name)
	}
	return ""
}
