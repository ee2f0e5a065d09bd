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
		on = append(on, "scan a wider range (--from, --to) for more candidates")
	}
	on = append(on, "give --allow-short-covers to fetch them short of the target")
	ways := strings.Join(on[:len(on)-1], ", ") + ", or " + on[len(on)-1]
	if len(on) == 1 {
		ways = on[0]
	}
	ways = strings.ToUpper(ways[:1]) + ways[1:]
	return &restated{fmt.Sprintf("--privacy-target %g not met: %s (--max-cover-blocks %d); none of the wallet's blocks was fetched. %s", e.Target, e.Reason(), e.Bound, ways), err}
}
