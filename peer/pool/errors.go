package pool

import (
	"errors"
	"fmt"
	"strings"
	"time"
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

// NotDialledError is the error of a member whose connection ended and
// that was not dialled again because its next dial was not due: at once
// for a request that does not wait (Pool.RedialDue), or when the
// request's context ended before the backoff did (Pool.Redial). Nothing
// was dialled and nothing charged; a caller that can ask another peer
// plans around the member, which Pool.Serving no longer lists until its
// dial is due.
type NotDialledError struct {
	// Peer is the member's address.
	Peer string
	// Failures is the member's dials or connections in a row that failed
	// or did not last, which set the backoff.
	Failures int
	// Wait is how long until the next dial was due.
	Wait time.Duration
	// Request is true for a request that did not wait (RedialDue), false
	// for one whose context ended while it waited.
	Request bool
	// Err is how the member's connection ended, or the context's error.
	Err error
}

// Error says which member was not dialled again, and why.
func (e *NotDialledError) Error() string {
	what := ""
	if e.Request {
		what = " for a request"
	}
	return fmt.Sprintf("peer %s: not dialled again%s: %d dials in a row failed or did not last, and the next is due in %v: %v",
		e.Peer, what, e.Failures, e.Wait.Round(time.Millisecond), e.Err)
}

// Unwrap returns how the connection ended, or the context's error.
func (e *NotDialledError) Unwrap() error { return e.Err }
