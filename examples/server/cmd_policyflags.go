package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/guardrail-control/guard/client/policyfile"
)

// fileList is a repeatable -f/-t flag: `-f a.yaml -f b.yaml`.
type fileList []string

func (l *fileList) String() string { return strings.Join(*l, ",") }

func (l *fileList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("a file name is required")
	}
	*l = append(*l, v)
	return nil
}

// parsePolicyFlags parses the flags of a policy command and returns the positional arguments. A bad flag
// exits 2 after the flag package printed the error and the usage; -h exits 0 (flag.ErrHelp).
func parsePolicyFlags(fs *flag.FlagSet, usage string, args []string) ([]string, error) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n", usage)
		fs.PrintDefaults()
	}
	// Flags may follow positional arguments too (`guard validate a.yaml -f b.yaml`): parse, take one
	// positional argument, parse the rest again.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &exitError{code: 2}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

// usageFail prints msg and the usage and asks for exit status 2.
func usageFail(fs *flag.FlagSet, msg string) error {
	fmt.Fprintf(fs.Output(), "guard %s: %s\n", fs.Name(), msg)
	fs.Usage()
	return &exitError{code: 2}
}

// loadPolicy reads policy files ("-" is the standard input) strictly (evaluators this binary does not have are errors, as on the
// server). An invalid policy prints every problem to out and asks for exit status 1.
func loadPolicy(files []string, env *commandEnv) (*policyfile.Policy, error) {
	srcs := make([]policyfile.Source, 0, len(files))
	stdinUsed := false
	for _, f := range files {
		var raw []byte
		var err error
		name := f
		if f == "-" {
			// `guard export | guard apply -f -`
			if stdinUsed {
				return nil, errors.New("the standard input (-) can be given once")
			}
			stdinUsed, name = true, "<stdin>"
			raw, err = policyfile.ReadFrom(env.stdin, name)
		} else {
			// Bounded as the standard input is: /dev/zero, an endless FIFO or a huge file is refused
			// with the cap in the message, in bounded memory (issue 23: 24 GB RSS, then the kernel's kill).
			raw, err = policyfile.ReadFile(f)
		}
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, policyfile.Source{Name: name, Data: raw})
	}
	pol, err := policyfile.LoadSources(srcs, policyfile.Options{})
	if err != nil {
		var pe *policyfile.Error
		if errors.As(err, &pe) {
			for _, p := range pe.Problems {
				fmt.Fprintln(env.stdout, p.String())
			}
			fmt.Fprintf(env.stdout, "FAIL: %d problem%s\n", len(pe.Problems), pluralSuffix(len(pe.Problems)))
			return nil, &exitError{code: 1}
		}
		return nil, err
	}
	return pol, nil
}

func pluralSuffix(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
