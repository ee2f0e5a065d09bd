package attack

import (
	"slices"
	"testing"
)

// TestLinkWarningsNameSessions: the linker's warnings, which number
// sessions from 1, name them in a capture report by their ids, as the
// rest of the report does.
func TestLinkWarningsNameSessions(t *testing.T) {
	ids := []string{"s-1", "s-2", "s-3"}
	got := sessionsByID([]string{
		"session 2: its filters match every candidate",
		"group 1+3: 3 joint matches: session 3 taken out",
		"session 9 is no session of the report",
		"session s-1 is named already",
	}, ids)
	want := []string{
		"session s-2: its filters match every candidate",
		"group s-1+s-3: 3 joint matches: session s-3 taken out",
		"session 9 is no session of the report",
		"session s-1 is named already",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
