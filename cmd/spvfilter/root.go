package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses: scripts tell bad input from other failures by them.
const (
	exitOK       = 0
	exitFailure  = 1
	exitBadInput = 2
)

// version is set at link time with -ldflags "-X main.version=...";
// otherwise the module version recorded in the binary is shown.
var version = ""

// commandRegistry holds the constructors of the top-level commands; each
// command file adds its own in an init function, so that adding a command
// touches one file.
var commandRegistry []func(*app) *cobra.Command

func registerCommand(f func(*app) *cobra.Command) {
	commandRegistry = append(commandRegistry, f)
}

// app carries what every command shares: its streams and the global flags.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	json   bool

	// running is set once a command's own code starts: any error before
	// that (flags, arguments, flag groups, unknown commands) is bad input.
	running bool

	// stdinUsed is set once an argument "-" has read standard input,
	// which can feed only one argument.
	stdinUsed bool
}

// run executes the command line args and returns the process exit status.
// It never lets a panic escape as a Go trace: a panic is reported as an
// internal error on one line.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "spvfilter: internal error: %v\n", r)
			status = exitFailure
		}
	}()
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := newRootCommand(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "spvfilter: %s\n", oneLine(err.Error()))
	if !a.running || isUsageError(err) {
		return exitBadInput
	}
	return exitFailure
}

func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "spvfilter",
		Short: "Bitcoin light-client filters: BIP 37 Bloom filters, BIP 158 compact filters, and their privacy",
		Long: `spvfilter builds, inspects and measures Bitcoin light-client filters.

  BIP 37   connection Bloom filters (filterload) and merkle block proofs
  BIP 158  compact block filters (Golomb-coded sets) and their header chain
  scan     light-client sessions against a node, in either mode
  privacy  how much a captured BIP 37 filter reveals, and how BIP 158 compares

Hex arguments also accept @FILE (hex read from FILE) and - (hex read from
standard input). Every command prints JSON with --json.

Exit status: 0 on success, 2 for bad input (a malformed argument, flag or
file), 1 for any other failure.`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print the result as one JSON object")
	// Flag parsing errors are bad input: mark them so run exits with 2.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError{err}
	})
	root.AddCommand(newVersionCommand(a))
	for _, f := range commandRegistry {
		root.AddCommand(f(a))
	}
	markRunning(a, root)
	return root
}

// markRunning wraps every command's RunE so that a.running tells errors of
// the command's own work from those cobra finds in the command line first.
func markRunning(a *app, c *cobra.Command) {
	if runE := c.RunE; runE != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			a.running = true
			return runE(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		markRunning(a, sub)
	}
}

func newVersionCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the spvfilter version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion()
			if a.json {
				return a.printJSON(map[string]string{"version": v})
			}
			_, err := fmt.Fprintf(a.stdout, "spvfilter %s\n", v)
			return err
		},
	}
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// usageError marks an error caused by bad input: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// badInput wraps err (or formats a new error) as bad input.
func badInput(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func isUsageError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// oneLine keeps error messages to one line on stderr.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
