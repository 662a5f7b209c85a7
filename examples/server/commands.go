package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
)

// command is one subcommand of the guard binary (`guard <name> [flags]`). Each command lives in a file of
// its own and registers itself in init, so the dispatcher and the help text list every command from one table.
type command struct {
	name    string // the word after `guard`
	summary string // one line for `guard -h`
	usage   string // the synopsis, e.g. "guard validate -f FILE..."
	// env lists the environment variables the command reads beyond the server's (envVars), for example a
	// client command's server URL and key; `guard help` lists them under the command's name.
	env []envVar
	// run executes the command. It returns nil for exit status 0, an *exitError for a chosen status
	// without a message of its own (validate: 1 when a file is invalid, diff: 2 when there are changes),
	// and any other error for status 1 with that error printed.
	run func(ctx context.Context, env *commandEnv, args []string) error
}

// commandEnv is what a command may use of the process: the environment, the standard streams.
// Tests run commands in-process with their own values.
type commandEnv struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// exitError asks for a process exit status without printing anything more.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitStatus maps a command's error to the process exit status.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

var commands = map[string]*command{}

// register adds a command to the table; called from init functions. A duplicate name is a programming error.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("guard: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// commandNames lists the registered commands in alphabetical order.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
