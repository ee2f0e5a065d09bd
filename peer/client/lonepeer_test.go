package client

import "testing"

// TestLonePeer: the one-peer warning names the peer a result rests on;
// a peer banned, unused or on another branch is not one it can rest on.
func TestLonePeer(t *testing.T) {
	a := PeerStatus{Address: "127.0.0.1:1"}
	banned := PeerStatus{Address: "127.0.0.1:2", Banned: true, Reason: "lied"}
	unused := PeerStatus{Address: "127.0.0.1:3", Reason: "serves no compact filters"}
	branch := PeerStatus{Address: "127.0.0.1:4", Branch: &Branch{}}
	for _, tt := range []struct {
		name  string
		peers []PeerStatus
		want  string
	}{
		{"one", []PeerStatus{a}, a.Address},
		{"one beside a banned and an unused", []PeerStatus{banned, a, unused}, a.Address},
		{"one beside a peer on another branch", []PeerStatus{a, branch}, a.Address},
		{"two", []PeerStatus{a, {Address: "127.0.0.1:5"}}, ""},
		{"none", []PeerStatus{banned, branch}, ""},
	} {
		if got := lonePeer(tt.peers); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
