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
	bound := fmt.Sprintf("--max-cover-blocks %d", e.Bound)
	if e.Bound < 0 {
		bound = "the whole range (--max-cover-blocks -1)"
	}
	var why string
	if e.Short > 0 {
		why = fmt.Sprintf("%d cover chains short after exploring %d blocks for them within %s", e.Short, e.Explored, bound)
	}
	if e.Unfetched > 0 {
		if why != "" {
			why += ", and "
		}
		why += fmt.Sprintf("the blocks of %d covers in use beyond %s", e.Unfetched, bound)
	}
	return &restated{fmt.Sprintf("--privacy-target %g not met: %s; none of the wallet's blocks was fetched. Scan again to explore on from here (the candidates found are kept in --datadir), raise --max-cover-blocks (-1 for no bound), or give --allow-short-covers to fetch them short of the target", e.Target, why), err}
}
