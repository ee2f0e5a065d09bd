package model

import (
	"errors"
	"testing"
)

// TestJointLimitsNameOtherField: a rule that bounds a field by another
// gives the other field, its value and the most the field may be beside
// it (none for a least) as data, so that a caller names both inputs
// without reading the message. Before, each was a FieldError of the
// field alone (Other, OtherValue and Most empty); the messages are
// unchanged.
func TestJointLimitsNameOtherField(t *testing.T) {
	tests := []struct {
		name              string
		model             func(*Params)
		compare           func(*CompareParams)
		field, value      string
		other, otherValue string
		most              string
		msg               string
	}{
		{name: "a universe smaller than the wallet", model: func(p *Params) { p.Addresses, p.UniverseSize = 20, 10 },
			field: "universe_size", value: "10", other: "addresses", otherValue: "20",
			msg: "smaller than the wallet's 20 addresses, which it includes"},
		{name: "addresses whose elements do not fit", model: func(p *Params) { p.Addresses, p.UniverseSize = 1<<31, 1<<40 },
			field: "addresses", value: "2147483648", other: "extra_elements", otherValue: "100", most: "2147483597",
			msg: "4294967396 elements do not fit a filter"},
		{name: "extra elements that leave no room", model: func(p *Params) { p.Addresses, p.ExtraElements = 1, 1<<32-1 },
			field: "addresses", value: "1", other: "extra_elements", otherValue: "4294967295", most: "0",
			msg: "4294967297 elements do not fit a filter"},
		{name: "one element per address", model: func(p *Params) {
			p.Addresses, p.ElementsPerAddress, p.ExtraElements, p.UniverseSize = 1<<32-1, 1, 5, 1<<40
		},
			field: "addresses", value: "4294967295", other: "extra_elements", otherValue: "5", most: "4294967290",
			msg: "4294967300 elements do not fit a filter"},
		{name: "appearances beyond the blocks", compare: func(p *CompareParams) { p.Blocks, p.WalletBlocks, p.Appearances = 10, 10, 11 },
			field: "appearances", value: "11", other: "blocks", otherValue: "10", most: "10",
			msg: "more than the 10 blocks scanned"},
		{name: "wallet blocks beyond the blocks", compare: func(p *CompareParams) { p.Blocks, p.WalletBlocks = 10, 12 },
			field: "wallet_blocks", value: "12", other: "blocks", otherValue: "10", most: "10",
			msg: "more than the 10 blocks scanned"},
		{name: "wallet blocks below the appearances", compare: func(p *CompareParams) { p.Blocks, p.WalletBlocks, p.Appearances = 10, 1, 2 },
			field: "wallet_blocks", value: "1", other: "appearances", otherValue: "2",
			msg: "fewer than the 2 blocks each of the wallet's scripts appears in (appearances)"},
		{name: "a limit of one field", model: func(p *Params) { p.Filters = 1001 },
			field: "filters", value: "1001", msg: "at most 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.model != nil {
				p := DefaultParams()
				tt.model(&p)
				_, err = Evaluate(p)
			} else {
				p := DefaultCompareParams()
				tt.compare(&p)
				_, err = Compare(p)
			}
			var fe *FieldError
			if !errors.Is(err, ErrBadParams) || !errors.As(err, &fe) {
				t.Fatalf("%v, want an ErrBadParams FieldError", err)
			}
			got := [6]string{fe.Field, fe.Value, fe.Other, fe.OtherValue, fe.Most, fe.Msg}
			want := [6]string{tt.field, tt.value, tt.other, tt.otherValue, tt.most, tt.msg}
			if got != want {
				t.Errorf("field, value, other, its value, most, message:\n got %q\nwant %q", got, want)
			}
		})
	}
}
