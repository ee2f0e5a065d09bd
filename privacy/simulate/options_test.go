package simulate

import (
	"errors"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// TestJointLimitsNameOtherField: a limit that one field sets on another
// names the other field and its value in the message, and gives both,
// with the most the limit allows, as data. Before, the message said
// "not in 0..1000 and below half the blocks" or "blocks of 50
// transactions: more than 2000000 in all", and a caller had to parse it.
func TestJointLimitsNameOtherField(t *testing.T) {
	tests := []struct {
		name              string
		change            func(*Options)
		field, value      string
		other, otherValue string
		most              string
		err               string
	}{
		{"decoys above half the blocks", func(o *Options) { o.Chain.Blocks, o.Fetch.Decoys = 20, 15 },
			"fetch.decoys_per_session", "15", "chain.block_count", "20", "9",
			"privacy: bad simulation options: fetch.decoys_per_session 15: not in 0..9: fewer than half of chain.block_count 20"},
		{"decoys at half the blocks", func(o *Options) { o.Chain.Blocks, o.Fetch.Decoys = 21, 10 },
			"fetch.decoys_per_session", "10", "chain.block_count", "21", "9",
			"privacy: bad simulation options: fetch.decoys_per_session 10: not in 0..9: fewer than half of chain.block_count 21"},
		{"decoys above their own limit", func(o *Options) { o.Chain.Blocks, o.Fetch.Decoys = 10_000, 1001 },
			"fetch.decoys_per_session", "1001", "", "", "",
			"privacy: bad simulation options: fetch.decoys_per_session 1001: not in 0..1000"},
		{"blocks of the default transactions", func(o *Options) { o.Chain.Blocks = 200_000 },
			"chain.block_count", "200000", "chain.txs_per_block", "50", "40000",
			"privacy: bad simulation options: chain.block_count 200000: with chain.txs_per_block 50, more than the 2000000 transactions of a chain: at most 40000 blocks"},
		{"blocks of the most transactions", func(o *Options) { o.Chain.Blocks, o.Chain.TxsPerBlock = 5000, 1000 },
			"chain.block_count", "5000", "chain.txs_per_block", "1000", "2000",
			"privacy: bad simulation options: chain.block_count 5000: with chain.txs_per_block 1000, more than the 2000000 transactions of a chain: at most 2000 blocks"},
		{"a limit of one field", func(o *Options) { o.Chain.Blocks = 5 },
			"chain.block_count", "5", "", "", "",
			"privacy: bad simulation options: chain.block_count 5: not in 10..1000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Fetch.Wallets = 1
			tt.change(&o)
			err := o.Validate()
			var fe *model.FieldError
			if !errors.Is(err, ErrBadOptions) || !errors.As(err, &fe) {
				t.Fatalf("%v, want an ErrBadOptions FieldError", err)
			}
			if err.Error() != tt.err {
				t.Errorf("message:\n %s\nwant\n %s", err, tt.err)
			}
			got := [5]string{fe.Field, fe.Value, fe.Other, fe.OtherValue, fe.Most}
			if want := [5]string{tt.field, tt.value, tt.other, tt.otherValue, tt.most}; got != want {
				t.Errorf("field, value, other, its value, most: %q, want %q", got, want)
			}
		})
	}
}
