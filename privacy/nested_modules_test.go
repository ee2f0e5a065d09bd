package privacy_test

import (
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestNestedModules runs the tests of privacy/beam, a module of its own so
// that the Apache Beam SDK stays out of spvfilter's dependencies.
func TestNestedModules(t *testing.T) { peertest.RunNestedModuleTests(t, "beam") }
