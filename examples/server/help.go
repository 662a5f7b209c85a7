package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

func init() {
	register(&command{name: "help", summary: "list the commands and the environment variables, or show one command's flags",
		usage: "guard help [command]", run: runHelp})
	register(&command{name: "version", summary: "print the version, commit, Go version and build tags",
		usage: "guard version", run: runVersion})
}

// isHelpArg reports whether a first argument asks for help rather than naming a command.
func isHelpArg(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// isVersionArg reports whether a first argument asks for the version.
func isVersionArg(a string) bool { return a == "-version" || a == "--version" || a == "-v" }

// runHelp is `guard help [command]`: the overview on stdout, exit 0.
func runHelp(ctx context.Context, env *commandEnv, args []string) error {
	if len(args) == 0 {
		writeOverview(env.stdout)
		return nil
	}
	if len(args) > 1 {
		return fmt.Errorf("help takes at most one command (commands: %s)", strings.Join(commandNames(), ", "))
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return fmt.Errorf("unknown command %q (commands: %s)", args[0], strings.Join(commandNames(), ", "))
	}
	return writeCommandHelp(ctx, env, cmd)
}

// writeOverview lists every registered command and every environment variable with its default.
func writeOverview(w io.Writer) {
	fmt.Fprint(w, `guard is the guardrail control service: a REST API, a dashboard and metrics over SQLite or PostgreSQL,
and the tools to keep controls in files.

Usage:
  guard <command> [flags]     (no command: serve)
  guard help <command>        a command's flags
  guard --version

Commands:
`)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, n := range commandNames() {
		fmt.Fprintf(tw, "  %s\t%s\n", n, commands[n].summary)
	}
	_ = tw.Flush()
	fmt.Fprint(w, "\nEnvironment (serve, migrate):\n")
	writeEnvTable(w, envVars)
	// Commands that read the same variables (apply, diff, export share one table) are listed together.
	var groups [][]string
	var tables [][]envVar
	for _, n := range commandNames() {
		c := commands[n]
		if len(c.env) == 0 {
			continue
		}
		i := slices.IndexFunc(tables, func(t []envVar) bool { return &t[0] == &c.env[0] })
		if i < 0 {
			groups, tables = append(groups, nil), append(tables, c.env)
			i = len(tables) - 1
		}
		groups[i] = append(groups[i], n)
	}
	for i, t := range tables {
		fmt.Fprintf(w, "\nEnvironment (%s):\n", strings.Join(groups[i], ", "))
		writeEnvTable(w, t)
	}
	fmt.Fprint(w, "\nDocumentation: docs/operations.md\n")
}

// writeEnvTable prints one entry per variable: name (and aliases), default, description.
func writeEnvTable(w io.Writer, vars []envVar) {
	for _, ev := range vars {
		name := ev.name
		for _, a := range ev.aliases {
			name += " (or " + a + ")"
		}
		fmt.Fprintf(w, "  %s  [default: %s]\n      %s\n", name, ev.defaultText(), ev.desc)
	}
}

// defaultText is the default as help shows it.
func (ev *envVar) defaultText() string {
	switch {
	case ev.defText != "":
		return ev.defText
	case ev.def != "":
		return ev.def
	}
	return "(unset)"
}

// writeCommandHelp prints a command's synopsis and summary, then its flags: the command's own flag set
// prints them when it is run with -h (and returns flag.ErrHelp without doing anything else).
func writeCommandHelp(ctx context.Context, env *commandEnv, cmd *command) error {
	fmt.Fprintf(env.stdout, "usage: %s\n\n%s\n", cmd.usage, cmd.summary)
	var flags bytes.Buffer
	fenv := *env
	fenv.stdout, fenv.stderr = &flags, &flags
	if err := cmd.run(ctx, &fenv, []string{"-h"}); errors.Is(err, flag.ErrHelp) {
		text := flags.String()
		if _, rest, ok := strings.Cut(text, "\n"); ok && strings.HasPrefix(text, "usage:") {
			text = rest // the flag set's own usage line repeats cmd.usage
		}
		if strings.TrimSpace(text) != "" {
			fmt.Fprintf(env.stdout, "\nFlags:\n%s", text)
		}
	}
	if cmd.name == "serve" || cmd.name == "migrate" {
		fmt.Fprint(env.stdout, "\nEnvironment:\n")
		writeEnvTable(env.stdout, envVars)
	}
	if len(cmd.env) > 0 {
		fmt.Fprint(env.stdout, "\nEnvironment:\n")
		writeEnvTable(env.stdout, cmd.env)
	}
	return nil
}

// runVersion is `guard version` (and `guard --version`).
func runVersion(_ context.Context, env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	if err := parseNoArgs(fs, "guard version", args); err != nil {
		return err
	}
	b := currentBuild()
	commit := b.Commit
	if b.Modified {
		commit += " (modified)"
	}
	fmt.Fprintf(env.stdout, "guard %s\ncommit:     %s\ngo:         %s\nbuild tags: %s\n", b.Version, commit, b.GoVersion, b.BuildTags())
	if !b.CGO {
		fmt.Fprintln(env.stdout, "databases:  PostgreSQL only (SQLite needs a cgo build: CGO_ENABLED=1 and a C compiler)")
	}
	return nil
}
