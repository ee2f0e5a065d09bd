package banlist_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/spvfilter/spvfilter/peer/banlist"
)

func ExampleList() {
	dataDir, err := os.MkdirTemp("", "bans-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dataDir)
	dir := filepath.Join(dataDir, "regtest") // locked by its owner (package store does)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	bans, _ := banlist.Open(dir)
	// A peer that lied is banned by host: its port does not matter, nor
	// how its address is written.
	if err := bans.Ban("[::ffff:192.0.2.1]:8333", "served a filter that fails its header", banlist.DefaultDuration); err != nil {
		log.Fatal(err)
	}
	bans.Close()

	// The ban outlives the process.
	bans, _ = banlist.Open(dir)
	defer bans.Close()
	b, banned := bans.Banned("192.0.2.1:8334")
	fmt.Println(banned, b.Host, b.Reason, b.Until.Sub(b.Since))
	// Output:
	// true 192.0.2.1 served a filter that fails its header 24h0m0s
}
