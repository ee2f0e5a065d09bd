package main

import (
	"context"
	"errors"
)

// exitInterrupted is the exit status of a command a signal (Ctrl-C,
// SIGTERM) ended before its work was done: 128 + SIGINT, as shells give.
const exitInterrupted = 130

// interruptedError is the error of a command a signal ended before its
// work was done.
type interruptedError struct{ what string }

func (e *interruptedError) Error() string { return e.what + " interrupted" }

// interruptedBy returns err, or an *interruptedError naming what when ctx,
// the command's signal context, ended it.
func interruptedBy(ctx context.Context, err error, what string) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return &interruptedError{what: what}
	}
	return err
}

// isInterrupted reports whether err is a command's interruption.
func isInterrupted(err error) bool {
	var ie *interruptedError
	return errors.As(err, &ie)
}
