package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// buildDetails is how the binary was built, as version --verbose prints
// it: what a bug report needs beside the version.
type buildDetails struct {
	Go       string `json:"go"`
	Platform string `json:"platform"`
	// Module is the main module's path and version; empty when the
	// binary holds no build information.
	Module   string `json:"module"`
	Revision string `json:"revision"` // the source revision, "" when not known
	Time     string `json:"time"`     // the revision's time, "" when not known
	Modified bool   `json:"modified"` // the work tree had changes not committed
	// Dependencies are the modules built in, "PATH VERSION" each, a
	// replaced one followed by " => " and its replacement.
	Dependencies []string `json:"dependencies"`
}

// readBuildDetails reads the build information the Go toolchain embeds
// in the binary.
func readBuildDetails() *buildDetails {
	b := &buildDetails{Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Dependencies: []string{}}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module = strings.TrimSpace(info.Main.Path + " " + info.Main.Version)
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	for _, d := range info.Deps {
		b.Dependencies = append(b.Dependencies, moduleText(d))
	}
	return b
}

// moduleText is a module as "PATH VERSION", followed by " => " and its
// replacement when it is replaced.
func moduleText(m *debug.Module) string {
	s := m.Path + " " + m.Version
	if m.Replace != nil {
		s += " => " + strings.TrimSpace(m.Replace.Path+" "+m.Replace.Version)
	}
	return s
}

// text is b as version --verbose prints it, after the version line.
func (b *buildDetails) text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "go:        %s\n", b.Go)
	fmt.Fprintf(&sb, "platform:  %s\n", b.Platform)
	if b.Module == "" {
		sb.WriteString("module:    not known (the binary holds no build information)\n")
		return sb.String()
	}
	fmt.Fprintf(&sb, "module:    %s\n", b.Module)
	if b.Revision != "" {
		rev := b.Revision
		if b.Time != "" {
			rev += " of " + b.Time
		}
		if b.Modified {
			rev += ", with changes not committed"
		}
		fmt.Fprintf(&sb, "revision:  %s\n", rev)
	}
	fmt.Fprintf(&sb, "modules built in: %d\n", len(b.Dependencies))
	for _, d := range b.Dependencies {
		fmt.Fprintf(&sb, "  %s\n", d)
	}
	return sb.String()
}
