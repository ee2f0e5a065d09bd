package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestWithheldHeadersErrorNamesTheCause: the reason a withholding
// announcer is dropped for says what it announced and how long it was
// waited for, is a stall (no lie), and never guesses at btcd's stale tip.
func TestWithheldHeadersErrorNamesTheCause(t *testing.T) {
	a, b := chainhash.Hash{1}, chainhash.Hash{2}
	for _, tc := range []struct {
		name      string
		announced []chainhash.Hash
		want      []string
	}{
		{"connected again", nil, []string{"within 2s", "after it connected again"}},
		{"one block", []chainhash.Hash{a}, []string{"within 2s", "announced block " + a.String(), "lacks"}},
		{"several", []chainhash.Hash{a, b}, []string{"within 2s", "announced 2 blocks", "the first " + a.String()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := peerErr(&pool.Member{}, "getheaders", &WithheldHeadersError{Announced: tc.announced, Waited: 2 * time.Second, Err: context.DeadlineExceeded})
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "24 hours") {
				t.Errorf("%q guesses at btcd's stale tip", msg)
			}
			if !errors.Is(err, peer.ErrStalled) || isLie(err) {
				t.Errorf("%q: a stall %v, a lie %v; want a stall, no lie", msg, errors.Is(err, peer.ErrStalled), isLie(err))
			}
			var wh *WithheldHeadersError
			if !errors.As(err, &wh) || len(wh.Announced) != len(tc.announced) {
				t.Errorf("%q: not a *WithheldHeadersError with the blocks announced", msg)
			}
		})
	}
	if err := peerErr(&pool.Member{}, "inv", &UnservedError{Blocks: 20}); isLie(err) || !strings.Contains(err.Error(), "20 blocks") {
		t.Errorf("%q: want 20 blocks named, and no lie", err)
	}
}

// TestWithholdersPreferred: an announcer that withheld its headers lately
// is not picked to lead while another can, is forgotten after
// withheldMemory or once gone from the pool, and with none other, no
// lead is offered.
func TestWithholdersPreferred(t *testing.T) {
	m1, m2, gone := &pool.Member{}, &pool.Member{}, &pool.Member{}
	live := []*pool.Member{m1, m2}
	for _, tc := range []struct {
		name string
		w    withholders
		ms   []*pool.Member
		want []*pool.Member
		kept int
	}{
		{"none withheld", nil, live, live, 0},
		{"one withheld lately", withholders{m1: time.Now()}, live, []*pool.Member{m2}, 1},
		{"all withheld lately", withholders{m1: time.Now(), m2: time.Now()}, live, nil, 2},
		{"withheld long ago", withholders{m1: time.Now().Add(-withheldMemory - time.Second)}, live, live, 0},
		{"gone from the pool", withholders{gone: time.Now()}, live, live, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.w.prefer(tc.ms, live)
			if len(got) != len(tc.want) {
				t.Fatalf("prefer = %d members, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("prefer[%d] is not the member wanted", i)
				}
			}
			if len(tc.w) != tc.kept {
				t.Errorf("%d withholders kept, want %d", len(tc.w), tc.kept)
			}
		})
	}
}
