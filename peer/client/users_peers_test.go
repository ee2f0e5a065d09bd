package client

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestUsersPeersAreTheUsers: a peer the user gives is never skipped
// without a word. Banned on a vote (a bans.json of an earlier version,
// whose ban rests on no proof), it is used, with a warning naming it and
// its ban. Banned with a proof, it is not used, and a warning names it,
// the ban and its end; Unban brings it back.
func TestUsersPeersAreTheUsers(t *testing.T) {
	needFixture(t)
	honest := honestPeers(t, 2)
	dir := t.TempDir()
	path := filepath.Join(dir, fx.node.Params.Name, "bans.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	write := func(version int, proof string) {
		t.Helper()
		data := fmt.Sprintf(`{"version":%d,"bans":[{"host":%q,"reason":"filter for block 108 outvoted by 2 peers that agree","since":%q,"until":%q%s}]}`,
			version, honest[0], now.Add(-time.Minute).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339), proof)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	write(1, "")
	c, err := Connect(ctx, Config{Peers: []string{honest[0]}, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second, ConnectOnly: true})
	if err != nil {
		t.Fatalf("a peer banned on a vote, given alone: %v", err)
	}
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: -1})
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if !hasWarning(res.Warnings, honest[0], "no proof", "used") {
		t.Errorf("warnings %q do not name the peer banned on no proof", res.Warnings)
	}

	write(2, `,"proof":true`)
	c, err = Connect(ctx, Config{Peers: honest, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second, ConnectOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err = c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: -1})
	if err != nil {
		t.Fatal(err)
	}
	if st := status(t, res, honest[0]); !st.Banned || !hasWarning(res.Warnings, honest[0], "banned until", "Unban") {
		t.Errorf("a peer given but banned with a proof: %+v, warnings %q", st, res.Warnings)
	}
	if err := c.Unban(honest[0]); err != nil {
		t.Fatal(err)
	}
	res, err = c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: -1})
	if err != nil {
		t.Fatal(err)
	}
	if st := status(t, res, honest[0]); st.Banned || st.Reason != "" || !st.Compared {
		t.Errorf("after Unban: %+v", st)
	}
}
