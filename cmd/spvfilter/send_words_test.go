package main

import (
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/client"
)

// TestAnnouncedWords: a peer's announcement is printed with on whose
// word it rests: the peer's own when the transaction was given to it,
// the network's when it was not (it propagated).
func TestAnnouncedWords(t *testing.T) {
	tests := []struct {
		name string
		res  client.SendResult
		want string
	}{
		{"given", client.SendResult{Given: []string{"127.0.0.1:1"}, Accepted: []string{"127.0.0.1:1"},
			Announced: map[string]time.Duration{"127.0.0.1:1": 102 * time.Millisecond}},
			"127.0.0.1:1 after 102ms (given it: on its own word)"},
		{"propagated", client.SendResult{Given: []string{"127.0.0.1:1", "127.0.0.1:2"}, Accepted: []string{"127.0.0.1:1", "127.0.0.1:2"},
			Seen:      []string{"127.0.0.1:2"},
			Announced: map[string]time.Duration{"127.0.0.1:1": 5 * time.Second, "127.0.0.1:2": 260 * time.Millisecond}},
			"127.0.0.1:1 after 5s (given it: on its own word), 127.0.0.1:2 after 260ms (not given it: it propagated)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := announcedWords(&tt.res); got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}
