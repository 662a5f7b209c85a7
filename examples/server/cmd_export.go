package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/guardrail-control/guard/client/policyfile"
)

func init() {
	register(&command{name: "export", summary: "write a server's controls and agent links as a policy file (what guard apply reads)",
		usage: "guard export [--server URL] [-o FILE]", run: runExport, env: remoteEnv})
}

// runExport is `guard export`: every live control with its data (enabled included) and every agent with
// the names of its linked controls, sorted, so that the output is the same for the same server state and
// `guard apply` of it changes nothing.
func runExport(ctx context.Context, env *commandEnv, args []string) error {
	const usage = "guard export [--server URL] [-o FILE]"
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var rf remoteFlags
	rf.register(fs)
	out := fs.String("o", "", "write to this file instead of the standard output")
	rest, err := parsePolicyFlags(fs, usage, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageFail(fs, fmt.Sprintf("unexpected argument %q", rest[0]))
	}
	rm, err := rf.connect(env, false)
	if err != nil {
		return usageFail(fs, err.Error())
	}
	state, err := rm.fetchState(ctx, nil)
	if err != nil {
		return err
	}
	pol, skipped := policyOf(state)
	for _, name := range skipped {
		fmt.Fprintf(env.stderr, "guard export: control %s has no data yet and is left out (a policy file control needs data)\n", name)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# guard policy exported by `guard export`; apply it with `guard apply -f FILE`.\n")
	if err := policyfile.Write(&buf, pol); err != nil {
		return err
	}
	if *out == "" {
		_, err := env.stdout.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "wrote %d controls and %d agents to %s\n", len(pol.Controls), len(pol.Agents), *out)
	return nil
}

// policyOf turns a server's state into a policy: controls without data cannot be written (a policy file
// control needs data) and are returned by name; links to them are left out too.
func policyOf(state remoteState) (*policyfile.Policy, []string) {
	pol := &policyfile.Policy{}
	var skipped []string
	have := map[string]bool{}
	for name, c := range state.Controls {
		if c.Data == nil {
			skipped = append(skipped, name)
			continue
		}
		d := *c.Data
		d.Enabled = c.Enabled
		pol.Controls = append(pol.Controls, policyfile.Control{Name: name, Data: d})
		have[name] = true
	}
	for name, links := range state.Agents {
		a := policyfile.Agent{Name: name, Controls: []string{}}
		for _, n := range links {
			if have[n] {
				a.Controls = append(a.Controls, n)
			}
		}
		pol.Agents = append(pol.Agents, a)
	}
	sort.Strings(skipped)
	return pol, skipped
}
