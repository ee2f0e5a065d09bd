package main

import (
	"errors"
	"fmt"

	"github.com/spvfilter/spvfilter/peer/client"
)

// coverWords says a scan's stop short of its privacy target
// (*client.PrivacyTargetError) in the tool's words, naming
// --max-cover-blocks and the ways on; any other error is returned as
// it is. The cause stays wrapped.
func coverWords(err error) error {
	var e *client.PrivacyTargetError
	if !errors.As(err, &e) {
		return err
	}
	return &restated{fmt.Sprintf("--privacy-target %g not met: %s (--max-cover-blocks %d); none of the wallet's blocks was fetched. Scan again to explore on from here (the candidates found are kept in --datadir), raise --max-cover-blocks (-1 for no bound), or give --allow-short-covers to fetch them short of the target", e.Target, e.Reason(), e.Bound), err}
}
