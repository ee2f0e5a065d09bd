package pool

import (
	"errors"
	"strings"
)

// ErrNoPeers: no member is left to ask.
var ErrNoPeers = errors.New("no usable peer")

// Failure is a request that failed at one member. Whoever made the
// request decides, knowing why it was made, whether the member lied
// (Pool.Ban), failed (Pool.Drop) or neither.
type Failure struct {
	Member *Member
	Err    error
}

func (f *Failure) Error() string { return f.Err.Error() }

// Unwrap returns the member's error.
func (f *Failure) Unwrap() error { return f.Err }

// Errors are the errors of several members, on one line; errors.Is and
// errors.As see each.
type Errors []error

func (e Errors) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

// Unwrap returns the error of each member.
func (e Errors) Unwrap() []error { return e }
