package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// exitInterrupted is the exit status of a command a signal (Ctrl-C,
// SIGTERM) ended before its work was done: 128 + SIGINT, as shells give.
const exitInterrupted = 130

// interruptedError is the error of a command a signal ended before its
// work was done.
type interruptedError struct {
	what string
	// kept, when not "", says what of the work done is kept, after
	// "interrupted: ".
	kept string
}

func (e *interruptedError) Error() string {
	if e.kept != "" {
		return e.what + " interrupted: " + e.kept
	}
	return e.what + " interrupted"
}

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

// watchesSignals are the commands that watch for Ctrl-C and SIGTERM
// themselves, to end tidily (their connections closed, their --datadir
// left whole, no file left cut short) with exitInterrupted, or, for
// capture, as their normal end. The others end as exitOnSignal ends
// them.
var watchesSignals = map[string]bool{
	"scan": true, "peers": true, "send": true,
	"privacy capture": true, "privacy universe": true,
}

// endOnSignal makes Ctrl-C or SIGTERM end the command c (see
// exitOnSignal); a command that watches for them itself is ended so only
// until it starts to (signalContext): before, while it read its
// arguments or reached its nodes, a signal ended it silently. The
// returned function stops watching, once c has returned.
func (a *app) endOnSignal(c *cobra.Command) func() {
	name := strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
	stopExit := a.exitOnSignal(name)
	if !watchesSignals[name] {
		return stopExit
	}
	var once sync.Once
	a.stopEarlySignals = func() { once.Do(stopExit) }
	return a.stopEarlySignals
}

// signalContext is parent, ended by Ctrl-C or SIGTERM, for a command
// that watches for them itself (watchesSignals): from now the signal
// ends the command's work, no longer the process (endOnSignal).
func (a *app) signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	if a.stopEarlySignals != nil {
		a.stopEarlySignals()
	}
	return ctx, stop
}

// signalLockWait is how long exitOnSignal waits for a commit or a write
// under way before it exits anyway.
const signalLockWait = 5 * time.Second

// exitOnSignal makes Ctrl-C or SIGTERM end the process as the commands
// that watch for them end: with exitInterrupted and one line, or JSON
// object, "NAME interrupted", naming the files not written and the pipes
// cut off. Without it the signal ended the process silently, and SIGTERM
// with status 143. It exits at once, deferred functions not run; first
// it removes the temporary files of the command's outputs not yet
// committed, waiting signalLockWait at most for a commit or a write
// under way (so that no file is left cut short at its path), and a
// second signal not at all. The returned function stops watching.
func (a *app) exitOnSignal(name string) (stop func()) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
			a.exitInterrupted(name, sig)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}

// exitInterrupted ends the process interrupted while the command name
// ran, as exitOnSignal says, a second signal on sig ending it at once.
func (a *app) exitInterrupted(name string, sig <-chan os.Signal) {
	o := &a.outputs
	locked := make(chan struct{})
	go func() {
		o.mu.Lock() // held until the process exits: no commit starts
		close(locked)
	}()
	msg := (&interruptedError{what: name}).Error()
	select {
	case <-locked:
		msg = interruptedMessage(&interruptedError{what: name}, o.unfinishedLocked())
		o.abandon(o.files)
	case <-sig:
	case <-time.After(signalLockWait):
	}
	a.printError(nil, msg, exitInterrupted)
	os.Exit(exitInterrupted)
}

// interruptedMessage is the message of err, a command's interruption,
// naming the files it did not write and the pipes or devices whose
// writing it cut off.
func interruptedMessage(err error, u unfinished) string {
	if said := u.String(); said != "" {
		return err.Error() + ": " + said
	}
	return err.Error()
}
