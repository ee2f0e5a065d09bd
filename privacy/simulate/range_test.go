package simulate

import (
	"errors"
	"reflect"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// TestOptionRangesCarried: every option held to a range by a rule of the
// field alone is refused with the range as data (the FieldError's Range),
// so that a caller states it in its own words, and with the message it
// had when the range was only in the message. Before, Range did not
// exist and a caller read the range back out of "not in 0..10000".
func TestOptionRangesCarried(t *testing.T) {
	whole := func(least, most float64) model.Range {
		return model.Range{Whole: true, Least: least, Most: most, HasLeast: true, HasMost: true}
	}
	span := func(r model.Range) model.Range { r.Span = true; return r }
	unit := model.Range{Least: 0, Most: 1, HasLeast: true, HasMost: true}
	openUnit := func(of string) model.Range {
		r := unit
		r.LeastOpen, r.MostOpen, r.Of = true, true, of
		return r
	}
	tests := []struct {
		name, field string
		change      func(*Options)
		want        model.Range
		msg         string
	}{
		{"wallets", "wallet_count", func(o *Options) { o.Wallets = -1 }, whole(0, 10_000), "not in 0..10000"},
		{"sessions", "sessions_per_wallet", func(o *Options) { o.Sessions = IntRange{0, 2} }, span(whole(1, 64)), "not within 1..64"},
		{"addresses", "addresses_per_wallet", func(o *Options) { o.Addresses = IntRange{1, 100_001} }, span(whole(1, 100_000)), "not within 1..100000"},
		{"rates", "fp_rate_range", func(o *Options) { o.FPRate = FloatRange{0.1, 1} }, span(openUnit("rate")), "not within (0, 1)"},
		{"sizing", "sizing", func(o *Options) { o.Sizing = "python" }, model.Range{Words: []string{"core", "bitcoinj"}}, "want core or bitcoinj"},
		{"elements", "elements_per_address", func(o *Options) { o.ElementsPerAddress = 3 }, model.Range{Words: []string{"1", "2"}}, "want 1 or 2"},
		{"extra elements", "extra_elements", func(o *Options) { o.ExtraElements = -1 }, whole(0, 100_000), "not in 0..100000"},
		{"pay fraction", "pay_fraction", func(o *Options) { o.PayFraction = 2 }, unit, "not in [0, 1]"},
		{"filteradd fraction", "filteradd_fraction", func(o *Options) { o.FilterAddFraction = -0.5 }, unit, "not in [0, 1]"},
		{"noise", "noise_session_count", func(o *Options) { o.Noise = -1 }, whole(0, 10_000), "not in 0..10000"},
		{"degenerate", "degenerate_session_count", func(o *Options) { o.Degenerate = 10_001 }, whole(0, 10_000), "not in 0..10000"},
		{"blocks", "chain.block_count", func(o *Options) { o.Chain.Blocks = 5 }, whole(10, 1_000_000), "not in 10..1000000"},
		{"transactions", "chain.txs_per_block", func(o *Options) { o.Chain.TxsPerBlock = 0 }, whole(1, 1000), "not in 1..1000"},
		{"cover target", "fetch.cover_target", func(o *Options) { o.Regime, o.Fetch.CoverTarget = RegimeCovered, 1 },
			openUnit("probability"), "the covered regime needs a target in (0, 1)"},
		{"fetch wallets", "fetch.wallet_count", func(o *Options) { o.Fetch.Wallets = 1001 }, whole(0, 1000), "not in 0..1000"},
		{"fetch sessions", "fetch.sessions_per_wallet", func(o *Options) { o.Fetch.Sessions = IntRange{0, 1} }, span(whole(1, 64)), "not within 1..64"},
		{"payments", "fetch.payments_per_wallet", func(o *Options) { o.Fetch.Payments = IntRange{0, 1} }, span(whole(1, 1000)), "not within 1..1000"},
		{"payers", "fetch.payers_per_wallet", func(o *Options) { o.Fetch.Payers = IntRange{2, 1} }, span(whole(1, 1000)), "not within 1..1000"},
		{"decoys", "fetch.decoys_per_session", func(o *Options) { o.Chain.Blocks, o.Chain.TxsPerBlock, o.Fetch.Decoys = 4000, 1, 1001 }, whole(0, 1000), "not in 0..1000"},
		{"fetch noise", "fetch.noise_session_count", func(o *Options) { o.Fetch.Noise = -1 }, whole(0, 10_000), "not in 0..10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			tt.change(&o)
			err := o.Validate()
			var fe *model.FieldError
			if !errors.Is(err, ErrBadOptions) || !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("%v: want an ErrBadOptions FieldError of %s", err, tt.field)
			}
			if fe.Range == nil {
				t.Fatalf("%v: no Range", err)
			}
			if !reflect.DeepEqual(*fe.Range, tt.want) {
				t.Errorf("Range %+v, want %+v", *fe.Range, tt.want)
			}
			if fe.Msg != tt.msg {
				t.Errorf("message %q, want %q", fe.Msg, tt.msg)
			}
		})
	}
	// A regime is one of the regimes' names.
	_, err := ParseRegime("sometimes")
	var fe *model.FieldError
	if !errors.As(err, &fe) || fe.Range == nil || len(fe.Range.Words) != len(Regimes()) || fe.Msg != fe.Range.Refusal() {
		t.Errorf("ParseRegime: %v, want a FieldError whose Range holds the %d regimes", err, len(Regimes()))
	}
}
