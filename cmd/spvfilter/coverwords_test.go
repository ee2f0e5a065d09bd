package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/client"
)

// TestCoverWords: a scan's stop short of its privacy target is said
// with the flags that set the bound and the ways on, the cause still
// wrapped; any other error is left as it is.
func TestCoverWords(t *testing.T) {
	other := errors.New("client: something else")
	for _, tc := range []struct {
		name string
		err  error
		want []string
		not  []string
	}{
		{"short within a bound", fmt.Errorf("scan: %w", &client.PrivacyTargetError{Target: 0.5, Short: 3, Explored: 120, Bound: 160}),
			[]string{"--privacy-target 0.5 not met: 3 cover chains short after exploring 120 blocks for candidates within a bound of 160 cover blocks (--max-cover-blocks 160);", "none of the wallet's blocks was fetched", "--allow-short-covers"}, nil},
		{"short, some of the wallet's blocks explored", &client.PrivacyTargetError{Target: 0.5, Short: 3, Explored: 120, Bound: 160, WalletExplored: 14, WalletOnce: 10},
			[]string{"of the wallet's blocks only 14 blocks among those explored were fetched, 10 of them asked once for a chain of the wallet's no peer was asked a block of before."}, []string{"none of the wallet's blocks"}},
		{"no bound, covers in use left out", &client.PrivacyTargetError{Target: 0.3, Unfetched: 2, Bound: -1},
			[]string{"--privacy-target 0.3 not met: the blocks of 2 covers in use beyond no bound (--max-cover-blocks -1)"}, nil},
		{"both", &client.PrivacyTargetError{Target: 0.5, Short: 1, Unfetched: 2, Explored: 7, Bound: 9},
			[]string{"1 cover chain short after exploring 7 blocks for candidates within a bound of 9 cover blocks, and the blocks of 2 covers in use beyond a bound of 9 cover blocks (--max-cover-blocks 9);"}, nil},
		{"the range explored over scans short in a row", &client.PrivacyTargetError{Target: 0.5, Short: 1, ShortClasses: []int{5}, Explored: 90, Bound: 160, RangeExplored: true},
			[]string{"1 cover chain short (for the wallet's chains of scripts seen 5 times) after exploring every block of the range (90 blocks in this scan): it holds too few cover candidates", "Raise --privacy-target (a looser bound needs fewer cover chains)", "a wider range (--from, --to)"},
			[]string{"Scan again", "raise --max-cover-blocks"}},
		{"another error", other, []string{"client: something else"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := coverWords(tc.err)
			for _, w := range tc.want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got.Error(), w) {
					t.Errorf("%q says %q", got, w)
				}
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("%v does not wrap its cause", got)
			}
		})
	}
	if coverWords(nil) != nil {
		t.Error("nil worded as an error")
	}
}
