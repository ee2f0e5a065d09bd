package model

import (
	"fmt"

	"github.com/spvfilter/spvfilter/bip37"
)

// SizingRule names the arithmetic that turns an element count and a
// false-positive rate into a filter's size in bytes and its number of hash
// functions: bip37.Sizing, which holds both rules. The zero value means
// SizingCore.
type SizingRule = bip37.Sizing

// The rules, as bip37 names them.
const (
	SizingCore     = bip37.SizingCore
	SizingBitcoinj = bip37.SizingBitcoinj
)

// SizingRules lists the rules ParseSizingRule accepts.
var SizingRules = bip37.Sizings

// ParseSizingRule returns the rule named s: "core" or "bitcoinj"; an
// unknown one is an ErrBadParams naming the field.
func ParseSizingRule(s string) (SizingRule, error) {
	r, err := bip37.ParseSizing(s)
	if err != nil {
		words := make([]string, len(SizingRules))
		for i, r := range SizingRules {
			words[i] = string(r)
		}
		return "", outOf("sizing", fmt.Sprintf("%q", s), OneOf(words...))
	}
	return r, nil
}

// checkSizing reports a rule ParseSizingRule would refuse.
func checkSizing(r SizingRule) error {
	_, err := ParseSizingRule(string(r.OrCore()))
	return err
}

// falsePositiveRate is the rate of an element not in a filter of bits
// bits and k hash functions holding n elements (bip37.FalsePositiveRate).
func falsePositiveRate(bits uint64, k uint32, n uint64) float64 {
	return bip37.FalsePositiveRate(bits, k, n)
}
