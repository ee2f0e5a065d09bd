package privacy_test

import (
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestNestedModules runs the tests of privacy/beam,
// privacy/neutrinocapture and privacy/walletcapture, modules of their
// own so that the Apache Beam SDK, lightninglabs/neutrino and btcwallet
// stay out of spvfilter's dependencies.
func TestNestedModules(t *testing.T) {
	for _, dir := range []string{"beam", "neutrinocapture", "walletcapture"} {
		t.Run(dir, func(t *testing.T) { peertest.RunNestedModuleTests(t, dir) })
	}
}
