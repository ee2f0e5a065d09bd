package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// TestJointLimitsNameBothFlags: a limit one model field sets on another
// (the universe holds the wallet's addresses; the filter's elements fit
// its count; each script appears in that many of the blocks) names the
// flag given and the other flag, and says what would work, from the
// error's fields (model.FieldError's Other, OtherValue and Most), not by
// matching its message. Before, the CLI matched the model's words, and
// said no value that would work; a --universe-size or --appearances given
// beyond its bound got the model's words alone, with no value that would
// work (in a sweep, where the bound moves with the swept value, it still
// does).
func TestJointLimitsNameBothFlags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string // the whole of it
	}{
		{"addresses beyond the default universe", []string{"privacy", "model", "--addresses", "4294967295"},
			"spvfilter: --addresses 4294967295: more than the --universe-size 10000000 candidates the node tests, which include the wallet's addresses (give --universe-size 4294967295 or more)\n"},
		{"addresses whose elements do not fit", []string{"privacy", "model", "--addresses", "3000000000", "--universe-size", "5000000000"},
			"spvfilter: --addresses 3000000000: the filter would be sized for more than the 4294967295 elements a filter counts (addresses times elements per address, plus extra elements): give --addresses 2147483597 at most (with --extra-elements 100)\n"},
		{"elements per address given", []string{"privacy", "model", "--elements-per-address", "3", "--addresses", "2000000000", "--universe-size", "5000000000"},
			"spvfilter: --elements-per-address 3: the filter would be sized for more than the 4294967295 elements a filter counts (addresses times elements per address, plus extra elements): give --addresses 1431655731 at most (with --extra-elements 100)\n"},
		{"extra elements that leave no room", []string{"privacy", "model", "--extra-elements", "4294967295"},
			"spvfilter: --extra-elements 4294967295: the filter would be sized for more than the 4294967295 elements a filter counts (addresses times elements per address, plus extra elements): not one address fits: give fewer\n"},
		{"demo names its keys", []string{"demo", "--keys", "1000", "--extra-elements", "4294967000"},
			"spvfilter: --extra-elements 4294967000: the filter would be sized for more than the 4294967295 elements a filter counts (addresses times elements per address, plus extra elements): give --keys 147 at most (with --extra-elements 4294967000)\n"},
		{"blocks below the default appearances", []string{"privacy", "compare", "--blocks", "1", "--wallet-blocks", "1"},
			"spvfilter: --blocks 1: fewer than the --appearances 2 blocks each script appears in (give --blocks 2 or more)\n"},
		{"appearances given beyond the blocks", []string{"privacy", "compare", "--appearances", "100000"},
			"spvfilter: --appearances 100000: more than the 52560 blocks scanned (--blocks): give --appearances 52560 at most, or more --blocks\n"},
		{"universe given below the default addresses", []string{"privacy", "model", "--universe-size", "5"},
			"spvfilter: --universe-size 5: smaller than the wallet's 100 addresses (--addresses), which it includes: give --universe-size 100 or more, or fewer --addresses\n"},
		{"universe given below the addresses given", []string{"privacy", "model", "--addresses", "200", "--universe-size", "100"},
			"spvfilter: --universe-size 100: smaller than the wallet's 200 addresses (--addresses), which it includes: give --universe-size 200 or more, or fewer --addresses\n"},
		{"universe below a swept address count names the sweep, no one value", []string{"privacy", "model", "--sweep", "addresses=1..200", "--universe-size", "100"},
			"spvfilter: --universe-size 100: smaller than the wallet's 101 addresses, which it includes (at addresses=101 of --sweep \"addresses=1..200\")\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, "", tc.args...)
			if status != exitBadInput || stderr != tc.stderr {
				t.Errorf("status %d, stderr\n %q\nwant 2 and\n %q", status, stderr, tc.stderr)
			}
		})
	}
}

// TestJointBlameReadsFields: the joint limits are worded from the error's
// fields: a message in other words changes nothing.
func TestJointBlameReadsFields(t *testing.T) {
	fl := pflag.NewFlagSet("model", pflag.ContinueOnError)
	fl.Uint64("universe-size", 10, "")
	fl.Uint32("addresses", 20, "")
	fl.Uint32("extra-elements", 100, "")
	fl.Uint64("blocks", 1, "")
	fl.Uint32("appearances", 2, "")
	for _, name := range []string{"addresses", "blocks"} {
		if err := fl.Set(name, fl.Lookup(name).DefValue); err != nil {
			t.Fatal(err)
		}
	}
	ff := fieldFlags{"universe_size": "universe-size", "addresses": "addresses", "extra_elements": "extra-elements",
		"blocks": "blocks", "appearances": "appearances"}
	for _, tc := range []struct {
		fe   model.FieldError
		want string
	}{
		{model.FieldError{Field: "universe_size", Value: "10", Other: "addresses", OtherValue: "20"},
			"--addresses 20: more than the --universe-size 10 candidates"},
		{model.FieldError{Field: "addresses", Value: "20", Other: "extra_elements", OtherValue: "100", Most: "7"},
			"--addresses 20: the filter would be sized for more than the 4294967295 elements a filter counts (addresses times elements per address, plus extra elements): give --addresses 7 at most"},
		{model.FieldError{Field: "appearances", Value: "2", Other: "blocks", OtherValue: "1", Most: "1"},
			"--blocks 1: fewer than the --appearances 2 blocks each script appears in (give --blocks 2 or more)"},
	} {
		fe := tc.fe
		fe.Kind, fe.Msg = model.ErrBadParams, "in other words"
		err := ff.badParams(&fe, fl)
		if !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, model.ErrBadParams) {
			t.Errorf("%+v:\n %v\nwant it to begin\n %s", fe, err, tc.want)
		}
	}
}
