package peertest

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// Shared is one node that the tests of a package share: it is started and
// set up by the first test that asks for it, so that fuzzing and examples
// run without it, and stopped by the package's TestMain.
type Shared[F any] struct {
	setup   func(*Node) (F, error)
	opts    []Option
	once    sync.Once
	node    *Node
	fixture F
	err     error
}

// NewShared returns a shared node started with opts and prepared by setup.
func NewShared[F any](setup func(*Node) (F, error), opts ...Option) *Shared[F] {
	return &Shared[F]{setup: setup, opts: opts}
}

// Get starts and sets up the node on first use and returns what setup
// made of it; a failure fails the test.
func (s *Shared[F]) Get(t testing.TB) F {
	t.Helper()
	s.once.Do(func() {
		if s.node, s.err = Start(s.opts...); s.err == nil {
			s.fixture, s.err = s.setup(s.node)
		}
	})
	if s.err != nil {
		t.Fatalf("setting up btcd: %v", s.err)
	}
	return s.fixture
}

// Stop stops the node if it was started, printing the tail of its log
// when the tests (their exit code) or the set-up failed. Call it from
// TestMain after m.Run.
func (s *Shared[F]) Stop(code int) {
	if s.node == nil {
		return
	}
	if code != 0 || s.err != nil {
		fmt.Fprintf(os.Stderr, "btcd output (tail):\n%s\n", s.node.LogTail(40))
	}
	s.node.Stop()
}
