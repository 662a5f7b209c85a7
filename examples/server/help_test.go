package main

import (
	"bytes"
	"errors"
	"flag"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// runInProcess runs the dispatcher like main does and returns stdout, stderr and the exit status.
func runInProcess(t *testing.T, vars map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(args, env(vars), &out, &errb)
	code := exitStatus(err)
	if isHelpErr(err) {
		code = 0
	}
	return out.String(), errb.String(), code
}

// TestHelpListsCommandsAndEnvironment: -h, --help and help print every registered command and every
// variable of the config table with its default, and exit 0.
func TestHelpListsCommandsAndEnvironment(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"-help"}} {
		out, errOut, code := runInProcess(t, nil, args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		for _, n := range commandNames() {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(n) + ` +\S`).MatchString(out) {
				t.Errorf("%v: command %s not listed:\n%s", args, n, out)
			}
		}
		for _, ev := range envVars {
			line := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(ev.name) + `\b.*\[default: (.*)\]$`).FindStringSubmatch(out)
			if line == nil || strings.TrimSpace(line[1]) != ev.defaultText() {
				t.Errorf("%v: %s not listed with its default %q:\n%s", args, ev.name, ev.defaultText(), out)
			}
			for _, a := range ev.aliases {
				if !strings.Contains(out, "(or "+a+")") {
					t.Errorf("%v: alias %s of %s not listed", args, a, ev.name)
				}
			}
		}
	}
}

// TestHelpCommand: help <command> shows its synopsis and its flags; an unknown command is an error.
func TestHelpCommand(t *testing.T) {
	out, _, code := runInProcess(t, nil, "help", "serve")
	if code != 0 || !strings.Contains(out, "usage: guard serve [--migrate]") || !strings.Contains(out, "-migrate") ||
		!strings.Contains(out, "DATABASE_URL") {
		t.Fatalf("help serve: exit %d\n%s", code, out)
	}
	for _, n := range commandNames() {
		out, errOut, code := runInProcess(t, nil, "help", n)
		if code != 0 || !strings.Contains(out, "usage: "+commands[n].usage) {
			t.Errorf("help %s: exit %d\n%s%s", n, code, out, errOut)
		}
	}
	// serve -h prints its flags and exits 0 without serving.
	if _, errOut, code := runInProcess(t, nil, "serve", "-h"); code != 0 || !strings.Contains(errOut, "-migrate") {
		t.Errorf("serve -h: exit %d\n%s", code, errOut)
	}
	if _, _, code := runInProcess(t, nil, "help", "nonsense"); code != 1 {
		t.Errorf("help nonsense: exit %d, want 1", code)
	}
}

// TestVersion: version and --version print the version, commit, Go version and build tags.
func TestVersion(t *testing.T) {
	b := currentBuild()
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		out, _, code := runInProcess(t, nil, args...)
		if code != 0 || !strings.HasPrefix(out, "guard "+version+"\n") || !strings.Contains(out, "commit:") ||
			!strings.Contains(out, b.GoVersion) || !strings.Contains(out, "build tags: "+b.BuildTags()) {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	if _, _, code := runInProcess(t, nil, "version", "extra"); code == 0 {
		t.Error("version with an argument exited 0")
	}
}

// TestHelpAndVersionBinary: the real binary exits 0 on -h and --version, and -ldflags sets the version
// and the commit.
func TestHelpAndVersionBinary(t *testing.T) {
	bin := buildServer(t)
	for _, args := range [][]string{{"-h"}, {"help"}, {"help", "migrate"}, {"--version"}} {
		out, err := runBin(bin, nil, args...)
		if err != nil || !strings.Contains(out, "guard") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	if testing.Short() {
		return
	}
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-ldflags", "-X main.version=9.8.7 -X main.commit=0123456789abcdef0123",
		"-o", dir+"/guard", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	got, err := runBin(dir+"/guard", nil, "version")
	if err != nil || !strings.Contains(got, "guard 9.8.7") || !strings.Contains(got, "commit:     0123456789abcdef0123") {
		t.Fatalf("version with -ldflags: %v\n%s", err, got)
	}
}

func isHelpErr(err error) bool { return errors.Is(err, flag.ErrHelp) }
