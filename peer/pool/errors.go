package pool

import (
	"errors"
	"strings"
)

// ErrNoPeers is the error of a request that found no member left to ask.
var ErrNoPeers = errors.New("no usable peer")

// Failure is a request that failed at one member. Whoever made the
// request decides, knowing why it was made, whether the member lied
// (Pool.Ban), failed (Pool.Drop) or neither.
type Failure struct {
	// Member is the member asked.
	Member *Member
	// Err is the member's error: what the request returned, or how its
	// connection ended.
	Err error
}

// Error returns the member's error's text.
func (f *Failure) Error() string { return f.Err.Error() }

// Unwrap returns the member's error.
func (f *Failure) Unwrap() error { return f.Err }

// Errors are the errors of several members, on one line; errors.Is and
// errors.As see each.
type Errors []error

// Error joins the members' errors with "; ".
func (e Errors) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

// Unwrap returns the error of each member.
func (e Errors) Unwrap() []error { return e }
