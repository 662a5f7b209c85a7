package main

import (
	"github.com/guardrail-control/guard/store"

	"runtime"
	"runtime/debug"
	"strings"
)

// Set at build time, e.g.
//
//	go build -ldflags "-X main.version=1.2.3 -X main.commit=$(git rev-parse HEAD)" -o guard ./examples/server
//
// Without -X main.commit the commit comes from the VCS stamp Go embeds in a build from a git checkout
// (runtime/debug.ReadBuildInfo's vcs.revision).
var (
	version = "0.1.0"
	commit  = ""
)

// buildInfo says what binary this is: `guard version`, the start-up line and the build_info metric.
type buildInfo struct {
	Version   string
	Commit    string // "unknown" when neither -ldflags nor the VCS stamp gives one
	Modified  bool   // the VCS stamp says the tree had uncommitted changes
	GoVersion string
	CGO       bool   // built with cgo: SQLite is available
	Tags      string // -tags of the build, "" when none
}

// currentBuild reads the build settings of the running binary.
func currentBuild() buildInfo {
	b := buildInfo{Version: version, Commit: commit, GoVersion: runtime.Version(), CGO: store.SQLiteAvailable}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			case "-tags":
				b.Tags = s.Value
			}
		}
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// ShortCommit is the first 12 characters of the commit (the whole value when shorter).
func (b buildInfo) ShortCommit() string {
	if len(b.Commit) > 12 && b.Commit != "unknown" {
		return b.Commit[:12]
	}
	return b.Commit
}

// BuildTags names the build's tags, cgo first: "cgo", "no cgo", "cgo,mytag".
func (b buildInfo) BuildTags() string {
	tags := []string{"no cgo"}
	if b.CGO {
		tags[0] = "cgo"
	}
	if b.Tags != "" {
		tags = append(tags, b.Tags)
	}
	return strings.Join(tags, ",")
}
