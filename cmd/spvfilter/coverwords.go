package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spvfilter/spvfilter/peer/client"
)

// coverWords says a scan's stop short of its privacy target
// (*client.PrivacyTargetError) in the tool's words, naming
// --max-cover-blocks and only the ways on that can help: none that
// explores again once the whole range is explored, and no larger bound
// than none; any other error is returned as it is. The cause stays
// wrapped.
func coverWords(err error) error {
	var e *client.PrivacyTargetError
	if !errors.As(err, &e) {
		return err
	}
	var on []string
	if !e.RangeExplored {
		on = append(on, "Scan again to explore on from here (the candidates found are kept in --datadir)")
	}
	if e.Bound >= 0 && (!e.RangeExplored || e.Unfetched > 0) {
		on = append(on, "raise --max-cover-blocks (-1 for no bound)")
	}
	if e.RangeExplored {
		on = append(on, "raise --privacy-target (a looser bound needs fewer cover chains)", "scan a wider range (--from, --to) for more candidates")
	}
	on = append(on, "give --allow-short-covers to fetch them short of the target")
	ways := strings.Join(on[:len(on)-1], ", ") + ", or " + on[len(on)-1]
	if len(on) == 1 {
		ways = on[0]
	}
	ways = strings.ToUpper(ways[:1]) + ways[1:]
	return &restated{fmt.Sprintf("--privacy-target %g not met: %s (--max-cover-blocks %d); %s. %s", e.Target, e.Reason(), e.Bound, e.Fetched(), ways), err}
}

// coverLine is a scan's cover cost in one line: the covers, then the
// blocks fetched beyond the wallet's, for covers or to explore for
// them, with the blocks explored counted apart (none of them the
// wallet's nor a cover's in use), so that blocks fetched without a cover
// in use add up.
func coverLine(k *client.CoverCost) string {
	pct := func(a, b uint64) string {
		if b == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(a)/float64(b))
	}
	s := fmt.Sprintf("covers for privacy target %g: %s (%d new), %s in reserve; %s beyond the wallet's %d (%s), %s (%s of the wallet's %d), fetched for covers or to explore for them (%s explored, none of them the wallet's nor a cover's in use)",
		k.Target, plural(k.Covers, "cover"), k.Drawn, plural(k.Reserve, "candidate"),
		plural(k.CoverBlocks, "block"), k.WalletBlocks, pct(uint64(k.CoverBlocks), uint64(k.WalletBlocks)),
		plural(k.CoverBytes, "byte"), pct(k.CoverBytes, k.WalletBytes), k.WalletBytes, plural(k.ExploredBlocks, "block"))
	if k.Met {
		return s + "; target met"
	}
	return s + "; target NOT met: " + k.Why
}
