package peer_test

import (
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestNestedModules runs the tests of peer/neutrinobench, a module of its
// own so that lightninglabs/neutrino stays out of spvfilter's
// dependencies.
func TestNestedModules(t *testing.T) { peertest.RunNestedModuleTests(t, "neutrinobench") }

// TestNestedModuleBtcwallet runs the tests of peer/btcwallet, the
// btcwallet backend's module, which keeps btcwallet's dependencies out of
// spvfilter's.
func TestNestedModuleBtcwallet(t *testing.T) { peertest.RunNestedModuleTests(t, "btcwallet") }
