package privacybeam

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	//lint:ignore SA1019 kept beside prism on purpose: it runs where no network namespace can be made, and it is spvfilter-beam's default (see README.md).
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/direct"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
)

// runner is a Beam runner the pipeline's tests run on.
type runner struct {
	name    string
	execute func(context.Context, *beam.Pipeline) (beam.PipelineResult, error)
	// skip says why the runner cannot run in this process, or is "".
	skip string
}

// prismSkip says why prism cannot run in this process (set by isolate),
// or is "".
var prismSkip string

// runners are the runners every pipeline test runs on: prism, the
// portable runner of Beam's Go SDK, which, like Flink, Spark and Dataflow,
// encodes every DoFn and every element between stages; and the direct
// runner, which encodes nothing.
func runners() []runner {
	return []runner{
		{name: "prism", execute: prism.Execute, skip: prismSkip},
		{name: "direct", execute: direct.Execute},
	}
}

// onRunners runs body as a subtest on each runner; a runner that cannot
// run here is skipped, saying why.
func onRunners(t *testing.T, body func(t *testing.T, r runner)) {
	t.Helper()
	for _, r := range runners() {
		t.Run(r.name, func(t *testing.T) {
			if r.skip != "" {
				t.Skip(r.skip)
			}
			body(t, r)
		})
	}
}

// isolatedEnv marks the child process isolate starts ("1"), or the probe
// it starts first ("probe").
const isolatedEnv = "SPVFILTER_BEAM_ISOLATED"

// isolate confines prism to loopback. Prism's in-process job server
// listens on every interface (Beam 2.77.0 binds ":0", with no option to
// bind another address), which tests must not do: so the tests are run
// again, with the same arguments, in a child process in a network
// namespace of its own whose only interface is loopback, and isolate
// returns the child's exit status with done set. Where no such namespace
// can be made (not Linux, or user namespaces not permitted), the tests run
// here, on the direct runner only, and prismSkip says why;
// SPVFILTER_PRISM_HOST=1 runs prism here anyway, on the host's interfaces.
func isolate() (code int, done bool) {
	switch os.Getenv(isolatedEnv) {
	case "probe":
		if err := loopbackOnly(); err != nil {
			fmt.Fprint(os.Stderr, err)
			return 1, true
		}
		return 0, true
	case "1":
		if err := loopbackOnly(); err != nil {
			fmt.Fprintf(os.Stderr, "privacybeam: isolating the network for prism: %v\n", err)
			return 1, true
		}
		return 0, false
	}
	if os.Getenv("SPVFILTER_PRISM_HOST") == "1" {
		fmt.Fprintln(os.Stderr, "privacybeam: SPVFILTER_PRISM_HOST=1: prism's job server listens on every interface of this host while the tests run")
		return 0, false
	}
	if err := probeIsolation(); err != nil {
		prismSkip = fmt.Sprintf("prism not run: its job server listens on every interface, and no network namespace with loopback only could be made to confine it (%v); SPVFILTER_PRISM_HOST=1 runs it on this host's interfaces", err)
		return 0, false
	}
	cmd, err := isolatedCommand("1", os.Args[1:]...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "privacybeam: %v\n", err)
		return 1, true
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode(), true
	default:
		fmt.Fprintf(os.Stderr, "privacybeam: the tests in a network namespace of their own: %v\n", err)
		return 1, true
	}
}

// probeIsolation starts this test binary in a network namespace of its
// own and checks that it can bring its loopback interface up.
func probeIsolation() error {
	cmd, err := isolatedCommand("probe", "-test.run=^$")
	if err != nil {
		return err
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// isolatedCommand is this test binary with args, to be run in a network
// namespace of its own with isolatedEnv set to mode.
func isolatedCommand(mode string, args ...string) (*exec.Cmd, error) {
	attr, err := isolation()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), isolatedEnv+"="+mode)
	cmd.SysProcAttr = attr
	return cmd, nil
}
