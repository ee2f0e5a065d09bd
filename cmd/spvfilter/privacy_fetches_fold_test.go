package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
)

// TestFoldSessionWarnings: a warning the sessions give but for its
// numbers is said once, whichever of its numbers differ (the batched
// warning has two), naming its sessions (all of them as all or both, at
// most namedAtMost by id) and listing every id beside it; each report's
// warnings are referred to by their place among those said once; a number
// inside a session id or a range stays part of the words; a warning said
// of one in the singular is the same warning, said in the plural of a
// range (before, the two were said apart).
func TestFoldSessionWarnings(t *testing.T) {
	const batched = "%s match(es) sit in transactions paying more than 4 matched scripts at once: the %s in batches have three quarters (batched)"
	rep := func(id string, warnings ...string) *attack.FetchReport {
		return &attack.FetchReport{Session: id, Client: "127.0.0.1:1", Warnings: warnings}
	}
	reps := func(n int, warning string) []*attack.FetchReport {
		var out []*attack.FetchReport
		for i := range n {
			out = append(out, rep("s"+string(rune('a'+i)), warning))
		}
		return out
	}
	cases := []struct {
		name     string
		reps     []*attack.FetchReport
		joined   string
		want     []string
		sessions [][]string
		refs     [][]int // per report, the place of each of its warnings
	}{
		{"two numbers differ", []*attack.FetchReport{rep("s1", fmt.Sprintf(batched, "4", "2")), rep("s2", fmt.Sprintf(batched, "6", "3")), rep("s3")},
			"", []string{"2 of 3 sessions (s1, s2): " + fmt.Sprintf(batched, "4 to 6", "2 to 3")}, [][]string{{"s1", "s2"}}, [][]int{{0}, {0}, {}}},
		{"every session", reps(3, "12 match(es) appear in a single block"),
			"", []string{"all 3 sessions: 12 match(es) appear in a single block"}, [][]string{{"sa", "sb", "sc"}}, [][]int{{0}, {0}, {0}}},
		{"more than named", append(reps(6, "covers cannot be ruled out (of 0.5 and more here)"), rep("sz")),
			"", []string{"6 of 7 sessions (sa, sb, sc, sd and 2 more): covers cannot be ruled out (of 0.5 and more here)"}, [][]string{{"sa", "sb", "sc", "sd", "se", "sf"}}, [][]int{{0}, {0}, {0}, {0}, {0}, {0}, {}}},
		{"decimals fold", []*attack.FetchReport{rep("s1", "few blocks: 3 such matches have 0.50 of it."), rep("s2", "few blocks: 5 such matches have 0.25 of it.")},
			"", []string{"both sessions: few blocks: 3 to 5 such matches have 0.25 to 0.50 of it."}, [][]string{{"s1", "s2"}}, [][]int{{0}, {0}}},
		{"numbers in ids and ranges are words", []*attack.FetchReport{
			rep("s1", "1 other session(s) simf7-3: shared", "taken to be every block (0..999)"),
			rep("s2", "1 other session(s) simf7-4: shared", "taken to be every block (0..500)")},
			"", []string{"session s1: 1 other session(s) simf7-3: shared", "session s1: taken to be every block (0..999)",
				"session s2: 1 other session(s) simf7-4: shared", "session s2: taken to be every block (0..500)"},
			[][]string{{"s1"}, {"s1"}, {"s2"}, {"s2"}}, [][]int{{0, 1}, {2, 3}}},
		{"the intersection", []*attack.FetchReport{rep("s1", "7 match(es) appear in a single block"), rep("s1+s2", "9 match(es) appear in a single block")},
			"the intersection", []string{"session s1 and the intersection: 7 to 9 match(es) appear in a single block"}, [][]string{{"s1", "s1+s2"}}, [][]int{{0}, {0}}},
		{"the intersection alone", []*attack.FetchReport{rep("s1"), rep("s2"), rep("s1+s2", "the session fetched every block it scanned")},
			"the intersection", []string{"the intersection: the session fetched every block it scanned"}, [][]string{{"s1+s2"}}, [][]int{{}, {}, {0}}},
		{"one and more", []*attack.FetchReport{rep("s1", "1 match sits, in its block: it is grouped, and has its share"), rep("s2", "3 matches sit, in their block: they are grouped, and have their share"),
			rep("s3", "1 match sits, in its block: it is grouped, and has its share")},
			"", []string{"all 3 sessions: 1 to 3 matches sit, in their block: they are grouped, and have their share"}, [][]string{{"s1", "s2", "s3"}}, [][]int{{0}, {0}, {0}}},
		{"one session twice", []*attack.FetchReport{rep("s1", "3 match(es) appear in a single block", "the session fetched every block it scanned", "5 match(es) appear in a single block"), rep("s2", "the session fetched every block it scanned")},
			"", []string{"session s1: 3 to 5 match(es) appear in a single block", "both sessions: the session fetched every block it scanned"},
			[][]string{{"s1"}, {"s1", "s2"}}, [][]int{{0, 1, 0}, {1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, sessions, refs := foldSessionWarnings(c.reps, c.joined)
			if !slices.Equal(got, c.want) {
				t.Errorf("warnings\n%q\nwant\n%q", got, c.want)
			}
			if !slices.EqualFunc(sessions, c.sessions, slices.Equal) {
				t.Errorf("sessions %q, want %q", sessions, c.sessions)
			}
			if !slices.EqualFunc(refs, c.refs, slices.Equal) {
				t.Errorf("refs %v, want %v", refs, c.refs)
			}
		})
	}
}
