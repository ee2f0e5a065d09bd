package banlist

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzDecodeBans decodes any ban list: what it accepts is in normal form
// and writes back the same.
func FuzzDecodeBans(f *testing.F) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	sound, err := json.Marshal(bansJSON{Version: bansVersion, Bans: []Ban{
		{Host: "127.0.0.1", Reason: "r", Since: at, Until: at.Add(time.Hour)},
		{Host: "::1", Since: at, Until: at.Add(time.Minute)},
		{Host: "node.example", Reason: "é", Since: at, Until: at.Add(time.Second)},
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sound)
	f.Add(sound[:len(sound)/2])
	f.Add([]byte(`{"version":1,"bans":[]}`))
	f.Add([]byte(`{"version":1,"bans":[{"host":"127.0.0.1:1","since":"2030-01-01T00:00:00Z","until":"2030-01-02T00:00:00Z"}]}`))
	f.Add([]byte(`{"version":1,"bans":[{"host":"::1","since":"2030-01-01T00:00:00Z","until":"2029-01-02T00:00:00Z"}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":2,"bans":[{"host":"::1","since":"2030-01-01T00:00:00Z","until":"2030-01-02T00:00:00Z","proof":true},[],{"host":"a b"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		bans, _, err := decodeBans(data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, b := range bans {
			if h, err := normalizeHost(b.Host); err != nil || h != b.Host || seen[h] || len(b.Reason) > maxBanReason || !b.Until.After(b.Since) {
				t.Fatalf("accepted ban %+v", b)
			}
			seen[b.Host] = true
		}
		// What is accepted writes back the same.
		again, err := json.Marshal(bansJSON{Version: bansVersion, Bans: bans})
		if err != nil {
			t.Fatal(err)
		}
		back, dropped, err := decodeBans(again)
		if err != nil || len(back) != len(bans) || len(dropped) != 0 {
			t.Fatalf("written back: %v", err)
		}
		for i := range back {
			if back[i].Host != bans[i].Host || back[i].Reason != bans[i].Reason || !back[i].Since.Equal(bans[i].Since) || !back[i].Until.Equal(bans[i].Until) || back[i].Proof != bans[i].Proof {
				t.Fatalf("written back %+v, was %+v", back[i], bans[i])
			}
		}
	})
}
