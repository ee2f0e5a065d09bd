package main

import (
	"fmt"
	"time"
)

// heightsOnChain checks the heights of --from and --to (to < 0: the tip)
// against tip, the chain tip of the nodes (whose: "node's" or "nodes'").
// A height the chain does not reach is the nodes' answer, a failure (exit
// status 1), not bad input: a node still syncing reaches it later. Every
// command that takes heights from nodes checks them here.
func heightsOnChain(from, to, tip int32, whose string) error {
	if to > tip {
		return fmt.Errorf("--to %d is above the %s chain tip %d: give a height up to %d, or leave --to out for the tip", to, whose, tip, tip)
	}
	if from > tip {
		return fmt.Errorf("--from %d is above the %s chain tip %d: give a height up to %d", from, whose, tip, tip)
	}
	return nil
}

// toBelowFrom is the bad input of a --to below --from, saying what would
// do.
func toBelowFrom(to, from int32) error {
	return badInput("--to %d is below --from %d: give --to %d or above, or leave --to out for the tip", to, from, from)
}

// notPositive is the bad input of a duration flag of 0 or less, saying
// what would do.
func notPositive(flag string, d time.Duration) error {
	return badRange(flag, d, "a duration above 0")
}
