// Command spvfilter builds, inspects and measures Bitcoin light-client
// filters: BIP 37 Bloom filters and merkle blocks, BIP 158 compact filters,
// light-client scans against a node, and the privacy a BIP 37 filter leaks.
//
// Run "spvfilter --help" for the list of commands; README.md holds the
// contract every command keeps and the reference of every command,
// generated from the help text.
package main

//go:generate go test -run ^TestDocsUpToDate$ . -update

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
