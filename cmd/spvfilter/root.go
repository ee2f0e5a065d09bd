package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/peer"
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

	// newBar, when set, makes the progress bars in place of the ones
	// drawn on a terminal (see app.bar).
	newBar func(what string, total int) (set func(done, total int), finish func())

	// stopSignals stops endOnSignal's watch, once the command returned.
	stopSignals func()
	// stopEarlySignals, for a command that watches for signals itself,
	// stops endOnSignal's watch once it does (signalContext).
	stopEarlySignals func()

	// outputs are the files the command writes, put in place only
	// once written whole.
	outputs outputs

	// cobraOut is where cobra writes help and completion scripts:
	// standard output, or a buffer while --json turns them into JSON.
	cobraOut *swapWriter
}

// errWriter writes to w and keeps the first error a write returned.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

// swapWriter writes to W, which can be swapped.
type swapWriter struct{ W io.Writer }

func (s *swapWriter) Write(p []byte) (int, error) { return s.W.Write(p) }

// capture runs fn with what cobra writes going into a string.
func (a *app) capture(fn func()) string {
	var b strings.Builder
	old := a.cobraOut.W
	a.cobraOut.W = &b
	defer func() { a.cobraOut.W = old }()
	fn()
	return b.String()
}

// run executes the command line args and returns the process exit status.
// It never lets a panic escape as a Go trace: a panic is reported as an
// internal error on one line.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	return (&app{stdin: stdin, stdout: stdout, stderr: stderr}).execute(args)
}

// execute runs the command line args with a's streams, as run does.
func (a *app) execute(args []string) (status int) {
	defer func() {
		if r := recover(); r != nil {
			status = exitFailure
			a.printError(args, fmt.Sprintf("internal error: %v", r), status)
		}
	}()
	out := &errWriter{w: a.stdout}
	a.stdout = out
	err := a.runCommand(args)
	unfinished := a.outputs.unfinished()
	if out.err != nil {
		// The result did not reach standard output (a full disk): the
		// command did not do its work, whatever else it said.
		a.printError(args, "standard output: "+unnamedFileProblem(out.err), exitFailure)
		return exitFailure
	}
	if err == nil {
		return exitOK
	}
	status = exitFailure
	msg := err.Error()
	switch {
	case isInterrupted(err):
		status = exitInterrupted
		msg = interruptedMessage(err, unfinished)
	case !a.running || isUsageError(err):
		status = exitBadInput
	}
	a.printError(args, msg, status)
	return status
}

// runCommand runs the command line args and returns the command's
// error. Once the command ends, returned or panicked, the temporary
// files of the outputs it did not commit are removed: none is left
// behind, whatever path it ended by (deferred, this runs before execute
// reports a panic, and before it reports an error).
func (a *app) runCommand(args []string) error {
	defer a.outputs.abortAll()
	root := newRootCommand(a)
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetErr(a.stderr)
	c, err := root.ExecuteC()
	fillRange(c, err)
	if a.stopSignals != nil {
		a.stopSignals()
	}
	return err
}

// printError writes an error as one line on standard error: plain text,
// or with --json the object {"error": ..., "exit_code": ...}. The command
// line is looked at too, since the error may come before --json is parsed.
func (a *app) printError(args []string, msg string, status int) {
	msg = oneLine(msg)
	if !a.json && !jsonRequested(args) {
		fmt.Fprintf(a.stderr, "spvfilter: %s\n", msg)
		return
	}
	b := plainJSON(struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exit_code"`
	}{msg, status})
	fmt.Fprintf(a.stderr, "%s\n", b)
}

// jsonRequested reports whether the command line asks for --json, the
// last occurrence before "--" deciding.
func jsonRequested(args []string) bool {
	on := false
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if arg == "--json" {
			on = true
		} else if v, ok := strings.CutPrefix(arg, "--json="); ok {
			on, _ = strconv.ParseBool(v)
		}
	}
	return on
}

// rootCommands is the start of spvfilter's help: what it is for, and
// its commands by what they work on.
const rootCommands = `spvfilter builds, inspects and measures Bitcoin light-client filters.

  bloom, merkleblock  BIP 37 connection Bloom filters (filterload) and
                      merkle block proofs
  gcs                 BIP 158 compact block filters (Golomb-coded sets) and
                      their header chain
  scan                a light client over several nodes: the transactions
                      of a watch list, in BIP 37 or BIP 157 mode (peers and
                      send talk to the same nodes)
  privacy             what a wallet's BIP 37 filters and BIP 157 block
                      downloads reveal to the nodes, on real traffic or
                      simulated
  demo                that privacy attack on a BIP 37 wallet, on built-in
                      defaults, in about a second
  lab                 BIP 158's filter against Bloom, binary fuse and xor
                      filters on a chain's blocks, and what a client pays
                      per block`

// rootContract is the end of spvfilter's help: the contract every
// command keeps on JSON, exit statuses and the files it writes.
const rootContract = `Every command prints JSON with --json; an error is then one JSON object on
standard error, {"error": "...", "exit_code": N}. A result that may be
misleading carries warnings: on standard error, and in JSON as "warnings".
With --json every command writes only JSON on standard error: a warning is
in the result's "warnings" alone, and one that no result carries is a line
{"warning": "..."} there: so are privacy capture's, which its statistics
count as "warning_count", and scan --follow's while it follows, its
summary line holding those of the end.

Exit status: 0 on success, 2 for bad input (a malformed argument, flag or
address, a flag that takes one value given twice, a surplus argument, a
missing, unreadable or binary input file, a directory given as a file, an
output file in a directory that does not exist, a --datadir that does not
exist, a --datadir or output file you may not write, an unknown command,
shell or help topic), 1 for any other failure (a node, the network, the
machine; a --from or --to above the nodes' chain tip too, in every
command: what the nodes hold decides), 130 when Ctrl-C or SIGTERM ended a
command before its work was done.

A file a command writes (a plot, a universe, a simulation's files, a
block file) is put in place only once written whole, and files that go
together (a universe and its index, a simulation's files, two plots) all
at once: a command that fails or is interrupted leaves none cut short,
and what was there before as it was; an interrupted one names the files
it did not write, and as interrupted a named pipe it was writing (a pipe
keeps nothing: its reader may have had part). Until put in place, a file
is written into a hidden one beside it (.plot.svg.spvfilter-PID.NUMBER.svg for
plot.svg, PID the process id of the command writing it), removed however
the command ends unless its process is killed outright (SIGKILL, a
crash) or a second Ctrl-C, or one while a write under way has not ended
in 5 seconds, ends it at once: one left then is never read. A file
replaced is kept as .plot.svg.old.spvfilter-PID.NUMBER until the new one is in
place: a failed command that could not put it back names it, and one a
killed process left holds the earlier file (rename it back if plot.svg
is missing, else remove it). The next command that writes plot.svg
removes the hidden files of processes that no longer run (where that
cannot be asked, as on Windows, those a day old) and names them on
standard error; an earlier file it names but keeps, unless it is
plot.svg itself under a second name. Those of a command writing plot.svg
at the same time are left.`

// rootExample shows a first command of each kind.
const rootExample = `  spvfilter demo
  spvfilter bloom new --elements 3 --fprate 0.01 @elements.txt
  spvfilter scan --connect 127.0.0.1:18444 --network regtest --watch bcrt1q...
  spvfilter privacy analyze --capture capture.jsonl --universe universe.txt`

// rootLong is spvfilter's help: its commands, how arguments are given,
// the networks, and the contract every command keeps.
func rootLong() string {
	return rootCommands + "\n\n" + inputHelp + "\n\nNetworks (--network): " + networkNames() + ".\n\n" + rootContract
}

func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:               "spvfilter",
		Short:             "Bitcoin light-client filters: BIP 37 Bloom filters, BIP 158 compact filters, and their privacy",
		Version:           buildVersion(),
		Long:              rootLong(),
		Example:           rootExample,
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	a.setUpRoot(root)
	// Every command, in one place; a group adds its subcommands.
	root.AddCommand(
		newBloomCommand(a),
		newGCSCommand(a),
		newMerkleBlockCommand(a),
		newScanCommand(a),
		newSendCommand(a),
		newPeersCommand(a),
		newPrivacyCommand(a),
		newDemoCommand(a),
		newLabCommand(a),
		newVersionCommand(a),
	)
	a.setUpHelp(root)
	applyFlagRules(root)
	markRunning(a, root)
	return root
}

// setUpRoot gives root its output, --version and --json, and the checks
// every command runs before its own: flag errors as bad input, the flags'
// rules, and the end on a signal.
func (a *app) setUpRoot(root *cobra.Command) {
	// Set before the completion commands are made: they keep the writer.
	a.cobraOut = &swapWriter{a.stdout}
	root.SetOut(a.cobraOut)
	// --version prints what the version command prints, as JSON with
	// --json.
	root.SetVersionTemplate("{{versionText .}}")
	root.InitDefaultVersionFlag()
	root.Flags().Lookup("version").Usage = "print the spvfilter version"
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print the result as one JSON object")
	// Flag parsing errors are bad input: mark them so run exits with 2.
	root.SetFlagErrorFunc(flagError)
	// The flags' rules (required, mutually exclusive) are checked in the
	// tool's words before cobra checks them in its own.
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if err := checkFlagRules(c); err != nil {
			return err
		}
		a.stopSignals = a.endOnSignal(c)
		a.outputs.notes = a.logWriter()
		return nil
	}
}

// setUpHelp gives root the help command and the completion commands,
// both honouring --json.
func (a *app) setUpHelp(root *cobra.Command) {
	root.SetHelpCommand(newHelpCommand())
	// --json is honoured by help and completion too: their text as the
	// value of a JSON object.
	textHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) { a.help(c, args, textHelp) })
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		c.Example = completionExample
		refuseUnknownShell(c)
		for _, shell := range c.Commands() {
			shell.Args = noArgs
			a.scriptAsJSON(shell)
		}
	}
}

// applyFlagRules holds every command under root to the rules all flags
// keep: one spelling, required flags marked, shared flags meaning one
// thing, no repeats of a single value, completed values, and the exit
// statuses said in the help.
func applyFlagRules(root *cobra.Command) {
	// One spelling, --fprate, for every command; --fp-rate still parses,
	// as the same flag. No command defines --fp-rate itself: it would be
	// normalized into a second --fprate.
	root.SetGlobalNormalizationFunc(normalizeFlagName)
	walkCommands(root, func(c *cobra.Command) {
		refuseUnknownSubcommand(c)
		c.Flags().VisitAll(func(f *pflag.Flag) {
			markRequired(f)
			checkSharedFlag(f)
			decimalOnly(f)
			refuseRepeats(c, f)
			completeValues(c, f)
		})
	})
	walkCommands(root, sayExitStatus)
}

// exitStatusLine ends the help of every command that does not say its
// exit statuses itself: the same three for all, as the root's help
// defines them.
const exitStatusLine = "Exit status: 0 done, 2 bad input, 1 failure (spvfilter --help says which is which)."

// sayExitStatus ends c's help with exitStatusLine unless c says its exit
// statuses already, or only groups commands, or is cobra's (help,
// completion).
func sayExitStatus(c *cobra.Command) {
	if !c.HasParent() || c.HasSubCommands() || strings.Contains(c.Long, "Exit status:") {
		return
	}
	for p := c; p != nil; p = p.Parent() {
		if p.Name() == "completion" || p.Name() == "help" {
			return
		}
	}
	c.Long = strings.TrimRight(c.Long, "\n") + "\n\n" + exitStatusLine
}

// walkCommands calls fn on c and every command below it.
func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, fn)
	}
}

// normalizeFlagName maps the old spelling --fp-rate to --fprate.
func normalizeFlagName(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if name == "fp-rate" {
		name = "fprate"
	}
	return pflag.NormalizedName(name)
}

// markRequired ends the help line of every required flag with
// "(required)", unless its help says so already ("(required; ...)").
func markRequired(f *pflag.Flag) {
	if req := f.Annotations[cobra.BashCompOneRequiredFlag]; len(req) == 1 && req[0] == "true" &&
		!strings.Contains(f.Usage, "(required") {
		f.Usage += " (required)"
	}
}

// sharedFlagChecks check, while the command line is parsed, the flags
// that mean the same in every command that has them; a bad value is then
// bad input before the command runs.
var sharedFlagChecks = map[string]func(string) error{
	"peer":     func(s string) error { return checkHostPort(s, false) },
	"connect":  func(s string) error { return checkHostPort(s, false) },
	"upstream": func(s string) error { return checkHostPort(s, false) },
	"listen":   func(s string) error { return checkHostPort(s, true) },
	// The flags that name what a command writes take a path, not the
	// @FILE of a flag that reads: "@st" would be a directory named so.
	"datadir":     func(s string) error { return noDash(s, "a directory") },
	"out":         writePath,
	"plot":        writePath,
	"plot-j":      writePath,
	"save-blocks": func(s string) error { return noDash(s, "a block file") },
	// The flags that name a file to read or write.
	"index":    notTilde,
	"capture":  notTilde,
	"universe": notTilde,
	"labels":   notTilde,
	"report":   notTilde,
	"vectors":  notTilde,
	"network": func(s string) error {
		if _, err := lookupNetwork(s); err != nil {
			_, want, _ := strings.Cut(err.Error(), ": ")
			return errors.New(want)
		}
		return nil
	},
}

// writePath refuses, as a path to write to, a value that reads as
// @FILE (notAtFile) or begins with a ~ no shell expanded (notTilde).
func writePath(s string) error {
	if err := notAtFile(s); err != nil {
		return err
	}
	return notTilde(s)
}

// noDash is writePath for a flag that names what (a directory, a file),
// which cannot be standard output: "-" would name a file or directory
// called so, where standard output was meant.
func noDash(s, what string) error {
	if s == "-" {
		return fmt.Errorf("%s, not standard output (for one named -, write ./-)", what)
	}
	return writePath(s)
}

// notTilde refuses a path that begins with ~/: the shell expands ~ only
// at the start of a word, not after --flag= or @, and the path would name
// a directory called ~ here.
func notTilde(s string) error {
	if s == "~" || strings.HasPrefix(s, "~/") {
		return errors.New("the shell did not expand ~ (it expands only a ~ that begins a word, not one after =): put a space between the flag and the path, or write $HOME in place of ~")
	}
	return nil
}

// notAtFile refuses, as a path to write to, a value that reads as @FILE.
func notAtFile(s string) error {
	if strings.HasPrefix(s, "@") {
		return fmt.Errorf("a path to write to, not @FILE (for a name that begins with @, write ./%s)", s)
	}
	return nil
}

// checkSharedFlag wraps the value of a shared flag with its check, and
// describes the networks of a --network flag from the one list.
func checkSharedFlag(f *pflag.Flag) {
	check, ok := sharedFlagChecks[f.Name]
	if !ok {
		return
	}
	if _, done := f.Value.(checkedValue); done {
		return
	}
	f.Value = checkedValue{f.Value, check}
	// pflag knows the empty default of a repeatable flag by its value's
	// type, which the wrapper hides: say it is empty the way it knows.
	if f.DefValue == "[]" {
		f.DefValue = ""
	}
	if f.Name == "network" {
		f.Usage = "network `NET`: " + networkNames()
	}
}

// flagValueCompletions are the values the shell completes for the flags
// that take one of a few names, whatever the command.
var flagValueCompletions = map[string]func() []string{
	"network": networkList,
	"mode":    func() []string { return []string{"bip157", "bip37"} },
	"flags":   func() []string { return []string{"none", "all", "p2pubkey-only"} },
}

// plotExtensions are the file types a --plot flag completes to.
var plotExtensions = []string{"svg", "png"}

// completeValues registers the completion of a flag's values: the names
// of flagValueCompletions, and plot files by their extensions. A command
// that registered its own keeps it.
func completeValues(c *cobra.Command, f *pflag.Flag) {
	if c.Flags().Lookup(f.Name) != f {
		return
	}
	if _, ok := c.GetFlagCompletionFunc(f.Name); ok {
		return
	}
	if values, ok := flagValueCompletions[f.Name]; ok {
		_ = c.RegisterFlagCompletionFunc(f.Name, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return values(), cobra.ShellCompDirectiveNoFileComp
		})
	} else if f.Name == "plot" || f.Name == "plot-j" {
		_ = c.RegisterFlagCompletionFunc(f.Name, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return plotExtensions, cobra.ShellCompDirectiveFilterFileExt
		})
	}
}

// checkedValue is a flag value that checks what it is set to.
type checkedValue struct {
	pflag.Value
	check func(string) error
}

func (v checkedValue) Set(s string) error {
	if err := v.check(s); err != nil {
		return err
	}
	return v.Value.Set(s)
}

// refuseUnknownSubcommand makes a command that only groups subcommands,
// the root included, print its help when called alone and refuse anything
// else as bad input, with the command meant when the name is close to one
// (cobra would print the help and succeed, and for the root say its
// suggestions over several lines).
func refuseUnknownSubcommand(c *cobra.Command) {
	if !c.HasSubCommands() || c.Run != nil || c.RunE != nil {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
		return cmd.Help()
	}
}

// unknownCommand is the error of arg given to c as a command it does not
// have, with the commands meant when arg is close to their names.
func unknownCommand(c *cobra.Command, arg string) error {
	msg := fmt.Sprintf("unknown command %q for %q", arg, c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	if near := c.SuggestionsFor(arg); len(near) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(near, " or "))
	}
	return badInput("%s; see %s --help", msg, c.CommandPath())
}

// completionExample shows the completion script loaded in a shell and
// installed for the next ones.
const completionExample = `  source <(spvfilter completion bash)
  spvfilter completion zsh > "${fpath[1]}/_spvfilter"
  spvfilter completion fish > ~/.config/fish/completions/spvfilter.fish`

// refuseUnknownShell makes "completion SHELL" with an unknown shell bad
// input.
func refuseUnknownShell(c *cobra.Command) {
	var shells []string
	for _, sub := range c.Commands() {
		shells = append(shells, sub.Name())
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return badInput("completion: unknown shell %q: want one of %s", args[0], strings.Join(shells, ", "))
		}
		return cmd.Help()
	}
}

// newHelpCommand is cobra's help command, except that an unknown topic is
// bad input instead of a usage message and success.
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "help prints the help of any command: spvfilter help [path to command].",
		Example: `  spvfilter help scan
  spvfilter help privacy model`,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return badInput("unknown help topic %q: see spvfilter help", strings.Join(args, " "))
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}

// markRunning wraps every command's RunE so that a.running tells errors of
// the command's own work from those cobra finds in the command line first.
func markRunning(a *app, root *cobra.Command) {
	walkCommands(root, func(c *cobra.Command) {
		if runE := c.RunE; runE != nil {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				a.running = true
				return runE(cmd, args)
			}
		}
	})
}

func newVersionCommand(a *app) *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the spvfilter version",
		Long:  "version prints the version of spvfilter, the one its user agent announces to nodes; with --verbose, also how the binary was built (Go version, platform, source revision, the modules built in), as a bug report wants.",
		Example: `  spvfilter version
  spvfilter version --json
  spvfilter version --verbose`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runVersion(a, cmd, verbose) },
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "also print how it was built: the Go version, the platform, the source revision and the version of every module built in")
	return cmd
}

// runVersion prints the version, as JSON when cmd's command line has
// --json; verbose adds how the binary was built.
func runVersion(a *app, cmd *cobra.Command, verbose bool) error {
	if !verbose {
		_, err := io.WriteString(a.stdout, versionText(cmd))
		return err
	}
	b := readBuildDetails()
	if a.json {
		return a.printJSON(versionJSON{Version: buildVersion(), Build: b, Warnings: []string{}})
	}
	_, err := io.WriteString(a.stdout, "spvfilter "+buildVersion()+"\n"+b.text())
	return err
}

func init() {
	cobra.AddTemplateFunc("versionText", versionText)
}

// versionText is the output of --version: the version command's, as JSON
// when the command line has --json.
func versionText(c *cobra.Command) string {
	if f := c.Flags().Lookup("json"); f != nil && f.Value.String() == "true" {
		b, _ := json.MarshalIndent(versionJSON{Version: buildVersion(), Warnings: []string{}}, "", "  ")
		return string(b) + "\n"
	}
	return "spvfilter " + buildVersion() + "\n"
}

// versionJSON is the JSON of the version command and of --version.
type versionJSON struct {
	Version string `json:"version"`
	// Build is how the binary was built, with --verbose only.
	Build    *buildDetails `json:"build,omitempty"`
	Warnings []string      `json:"warnings"`
}

// helpJSON is the help of a command with --json.
type helpJSON struct {
	Command  string   `json:"command"`
	Help     string   `json:"help"`
	Warnings []string `json:"warnings"`
}

// help prints the help of c as text prints it, or with --json as the
// value of a JSON object.
func (a *app) help(c *cobra.Command, args []string, text func(*cobra.Command, []string)) {
	if !a.json {
		text(c, args)
		return
	}
	help := a.capture(func() { text(c, args) })
	_ = a.printJSON(helpJSON{Command: c.CommandPath(), Help: help, Warnings: []string{}})
}

// completionJSON is a completion script with --json.
type completionJSON struct {
	Shell    string   `json:"shell"`
	Script   string   `json:"script"`
	Warnings []string `json:"warnings"`
}

// scriptAsJSON makes the command that prints the completion script of a
// shell print it, with --json, as the value of a JSON object.
func (a *app) scriptAsJSON(shell *cobra.Command) {
	runE := shell.RunE
	if runE == nil {
		return
	}
	shell.RunE = func(cmd *cobra.Command, args []string) error {
		if !a.json {
			return runE(cmd, args)
		}
		var err error
		script := a.capture(func() { err = runE(cmd, args) })
		if err != nil {
			return err
		}
		return a.printJSON(completionJSON{Shell: cmd.Name(), Script: script, Warnings: []string{}})
	}
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	// A build from a work tree: the version the client announces to
	// nodes in its user agent, marked as a development build.
	return userAgentVersion() + " (devel)"
}

// userAgentVersion is the version in the user agent the client sends to
// nodes, "/spvfilter:VERSION/".
func userAgentVersion() string {
	return strings.TrimPrefix(strings.Trim(peer.UserAgent, "/"), "spvfilter:")
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

// noArgs refuses every argument of a command that takes none, naming the
// first as surplus (cobra would call it an unknown command); below a
// command that groups subcommands, an argument is an unknown command.
// Where the usage line names flags that carry the input, it is shown.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && cmd.HasSubCommands() {
		return unknownCommand(cmd, args[0])
	}
	if len(args) > 0 {
		if use := cmd.UseLine(); use != cmd.CommandPath()+" [flags]" {
			return badInput("unexpected argument %q: %s takes no arguments, its input comes by flags: %s", args[0], cmd.CommandPath(), use)
		}
		return badInput("unexpected argument %q: %s takes no arguments", args[0], cmd.CommandPath())
	}
	return nil
}

// needArgs requires at least one argument: name is how the usage line
// names it (ELEMENT_HEX), what says what to give.
func needArgs(name, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return badInput("%s: give %s", name, what)
		}
		return nil
	}
}

// oneArg requires exactly one argument, named and described as by
// needArgs; a second is surplus.
func oneArg(name, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return badInput("unexpected argument %q: %s takes one %s", args[1], cmd.CommandPath(), name)
		}
		return needArgs(name, what)(cmd, args)
	}
}
