package cover_test

import (
	"fmt"
	"log"
	"os"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/peer/cover"
)

// A client keeps its covers across sessions: the first run starts a set,
// draws covers into it and saves it; the next run reads the same set
// back, and a scan matches its scripts beside the wallet's.
func Example() {
	dir, err := os.MkdirTemp("", "covers")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	set, _, err := cover.Open(dir, &chaincfg.RegressionNetParams)
	if err != nil {
		log.Fatal(err)
	}
	p2wpkh := append([]byte{0x00, 0x14}, make([]byte, 20)...)
	p2wpkh[21] = 7
	err = set.Add(cover.Cover{Script: p2wpkh, Profile: cover.Profile{Class: 2, First: 120, Drawn: 400}})
	if err != nil {
		log.Fatal(err)
	}
	if err := set.Save(); err != nil {
		log.Fatal(err)
	}

	// The next session, beside a store that holds a chain: a missing
	// file would be damage, not a first run.
	again, notes, err := cover.OpenWith(dir, &chaincfg.RegressionNetParams, cover.Options{Existing: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(again.Scripts()), "cover,", len(notes), "notes, same seed:", again.Seed() == set.Seed())
	// Output: 1 cover, 0 notes, same seed: true
}
