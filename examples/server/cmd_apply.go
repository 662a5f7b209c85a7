package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

func init() {
	register(&command{name: "apply", summary: "make a server hold what policy files say: create, update, link, unlink (and --prune delete) controls",
		usage: "guard apply -f FILE... [--server URL] [--dry-run] [--prune]", run: runApply, env: remoteEnv})
	register(&command{name: "diff", summary: "show what guard apply would change, as a diff; exit 2 when there are changes",
		usage: "guard diff -f FILE... [--server URL] [--prune]", run: runDiff, env: remoteEnv})
}

// exitChanges is the status of diff and apply --dry-run when the server differs from the files (like diff).
const exitChanges = 2

func runApply(ctx context.Context, env *commandEnv, args []string) error {
	return applyOrDiff(ctx, env, args, "apply", "guard apply -f FILE... [--server URL] [--dry-run] [--prune]")
}

func runDiff(ctx context.Context, env *commandEnv, args []string) error {
	return applyOrDiff(ctx, env, args, "diff", "guard diff -f FILE... [--server URL] [--prune]")
}

func applyOrDiff(ctx context.Context, env *commandEnv, args []string, name, usage string) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var files fileList
	fs.Var(&files, "f", "a policy file (YAML or JSON; - for the standard input); repeat the flag, or list more files")
	var rf remoteFlags
	rf.register(fs)
	prune := fs.Bool("prune", false, "delete the server's controls that no file names (unlinking them from every agent)")
	dryRun := new(bool)
	if name == "apply" {
		dryRun = fs.Bool("dry-run", false, "print the plan and change nothing; exit 2 when there are changes")
	}
	rest, err := parsePolicyFlags(fs, usage, args)
	if err != nil {
		return err
	}
	files = append(files, rest...)
	if len(files) == 0 {
		return usageFail(fs, "no file given")
	}
	pol, err := loadPolicy(files, env)
	if err != nil {
		return err
	}
	rm, err := rf.connect(env, name == "apply" && !*dryRun)
	if err != nil {
		return usageFail(fs, err.Error())
	}
	agents := make([]string, 0, len(pol.Agents))
	for _, a := range pol.Agents {
		agents = append(agents, a.Name)
	}
	if rm.admin {
		// Refuse before printing a plan that could not be applied: a key that may not write learns it first.
		if err := rm.checkWrite(ctx); err != nil {
			return err
		}
	}
	state, err := rm.fetchState(ctx, agents)
	if err != nil {
		return err
	}
	p, err := computePlan(pol, state, *prune)
	if err != nil {
		return err
	}
	p.render(env.stdout)
	if name == "diff" || *dryRun {
		if p.empty() {
			return nil
		}
		return &exitError{code: exitChanges}
	}
	if p.empty() {
		return nil
	}
	if err := rm.execute(ctx, env, &p, state); err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, "Applied.")
	return nil
}

// execute carries the plan out in order. Writes to existing controls carry If-Match with the version the
// plan was computed from: when another writer changed a control in between, the server refuses (412) and
// apply stops, saying so, rather than overwrite the other change.
func (r *remote) execute(ctx context.Context, env *commandEnv, p *plan, state remoteState) error {
	ids := make(map[string]int64, len(state.Controls))
	for name, c := range state.Controls {
		ids[name] = c.ID
	}
	for _, c := range p.Creates {
		id, err := r.api.CreateControl(ctx, c.Name, c.Data)
		if err != nil {
			var ae *client.APIError
			if errors.As(err, &ae) && ae.Status == http.StatusConflict {
				return fmt.Errorf("control %s was created on the server by someone else while apply ran; nothing more was written: run guard diff and apply again", c.Name)
			}
			return r.explain(fmt.Errorf("create control %s: %w", c.Name, err))
		}
		ids[c.Name] = id
		fmt.Fprintf(env.stdout, "created control %s (id %d)\n", c.Name, id)
	}
	for _, c := range p.Updates {
		ids[c.Name] = c.Remote.ID
		var err error
		if len(c.DataDiff) > 0 {
			var v int
			v, err = r.api.PutControlDataIfVersion(ctx, c.Remote.ID, *c.Data, c.Remote.Version)
			if err == nil {
				fmt.Fprintf(env.stdout, "updated control %s (version %d)\n", c.Name, v)
			}
		} else {
			var rec guard.ControlRecord
			rec, err = r.api.PatchControlIfVersion(ctx, c.Remote.ID, guard.ControlPatch{Enabled: c.Enable}, c.Remote.Version)
			if err == nil {
				fmt.Fprintf(env.stdout, "%s control %s (version %d)\n", map[bool]string{true: "enabled", false: "disabled"}[rec.Enabled], c.Name, rec.Version)
			}
		}
		if errors.Is(err, guard.ErrVersionMismatch) {
			return fmt.Errorf("control %s changed on the server since apply read it (version %d); it was not overwritten: run guard diff and apply again", c.Name, c.Remote.Version)
		}
		if err != nil {
			return r.explain(fmt.Errorf("update control %s: %w", c.Name, err))
		}
	}
	for _, a := range p.Agents {
		if a.Create {
			if _, err := r.api.InitAgent(ctx, client.InitAgentRequest{Agent: client.AgentInfo{Name: a.Name},
				ConflictMode: guard.ConflictStrict}); err != nil {
				return r.explain(fmt.Errorf("create agent %s: %w", a.Name, err))
			}
			fmt.Fprintf(env.stdout, "created agent %s\n", a.Name)
		}
		for _, n := range a.Link {
			id, err := r.controlID(ctx, ids, n)
			if err == nil {
				err = r.api.LinkControl(ctx, a.Name, id)
			}
			if err != nil {
				return r.explain(fmt.Errorf("link %s to agent %s: %w", n, a.Name, err))
			}
			fmt.Fprintf(env.stdout, "linked %s to agent %s\n", n, a.Name)
		}
		for _, n := range a.Unlink {
			id, err := r.controlID(ctx, ids, n)
			if err == nil {
				_, err = r.api.UnlinkControl(ctx, a.Name, id)
			}
			if err != nil {
				return r.explain(fmt.Errorf("unlink %s from agent %s: %w", n, a.Name, err))
			}
			fmt.Fprintf(env.stdout, "unlinked %s from agent %s\n", n, a.Name)
		}
	}
	for _, c := range p.Deletes {
		agents, err := r.api.DeleteControlIfVersion(ctx, c.Remote.ID, true, c.Remote.Version)
		if errors.Is(err, guard.ErrVersionMismatch) {
			return fmt.Errorf("control %s changed on the server since apply read it (version %d); it was not deleted: run guard diff and apply again", c.Name, c.Remote.Version)
		}
		if err != nil {
			return r.explain(fmt.Errorf("delete control %s: %w", c.Name, err))
		}
		fmt.Fprintf(env.stdout, "deleted control %s", c.Name)
		if len(agents) > 0 {
			fmt.Fprintf(env.stdout, " (unlinked from %v)", agents)
		}
		fmt.Fprintln(env.stdout)
	}
	return nil
}

// controlID resolves a control name to its id: one the plan created or updated, else the server's.
func (r *remote) controlID(ctx context.Context, ids map[string]int64, name string) (int64, error) {
	if id, ok := ids[name]; ok {
		return id, nil
	}
	page, err := r.api.ListControls(ctx, client.ControlListOptions{Name: name, PageOptions: client.PageOptions{Limit: 100}})
	if err != nil {
		return 0, err
	}
	for _, s := range page.Controls {
		if s.Name == name {
			ids[name] = s.ID
			return s.ID, nil
		}
	}
	return 0, fmt.Errorf("control %s does not exist on the server", name)
}
