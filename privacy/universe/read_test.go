package universe

import (
	"errors"
	"strings"
	"testing"
)

// RequireCandidates counts the lines read in words a reader reads.
func TestRequireCandidatesCountsLines(t *testing.T) {
	for _, tc := range []struct {
		read uint64
		want string
	}{
		{0, "(0 lines read)"},
		{1, "(1 line read)"},
		{3, "(3 lines read)"},
	} {
		err := (&Scan{LinesRead: tc.read}).RequireCandidates()
		if !errors.Is(err, ErrEmpty) || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%d lines read: %v, want ErrEmpty ending %q", tc.read, err, tc.want)
		}
	}
}
