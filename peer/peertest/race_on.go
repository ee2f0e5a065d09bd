//go:build race

package peertest

// raceEnabled: this binary was built with -race.
const raceEnabled = true
