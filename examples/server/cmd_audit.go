package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client"
)

func init() {
	register(&command{name: "audit", summary: "show who changed which control or agent, when, and what changed (the server's audit trail)",
		usage: auditUsage, run: runAudit, env: remoteEnv})
}

const auditUsage = "guard audit [--control ID] [--agent NAME] [--key NAME] [--action ACTION] [--since 24h] [--limit N] [--json] [--server URL]"

// runAudit is `guard audit`: GET /audit, newest first, following the cursor until --limit entries are
// printed. Any key may read it (a key scoped to agents reads theirs).
func runAudit(ctx context.Context, env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var opts client.AuditOptions
	fs.Int64Var(&opts.ControlID, "control", 0, "only the changes of this control (its id)")
	fs.StringVar(&opts.AgentName, "agent", "", "only the changes that reached this agent")
	fs.StringVar(&opts.KeyName, "key", "", "only the changes made with the API key of this name")
	fs.StringVar(&opts.Action, "action", "", "only this action (e.g. control.data_replaced, agent.control_linked)")
	since := fs.Duration("since", 0, "only the changes of this last period (e.g. 30m, 24h; default: all)")
	limit := fs.Int("limit", 20, "print at most this many entries (1 to 10000)")
	asJSON := fs.Bool("json", false, "print the entries as JSON, one per line")
	var rf remoteFlags
	rf.register(fs)
	if err := fs.Parse(args); err != nil {
		return usageFail(fs, err.Error())
	}
	if fs.NArg() > 0 {
		return usageFail(fs, "unexpected argument "+fs.Arg(0))
	}
	if *limit < 1 || *limit > 10000 {
		return usageFail(fs, "--limit must be from 1 to 10000")
	}
	if *since < 0 {
		return usageFail(fs, "--since must be a positive duration")
	}
	if *since > 0 {
		opts.Since = time.Now().Add(-*since)
	}
	rm, err := rf.connect(env, false)
	if err != nil {
		return usageFail(fs, err.Error())
	}
	printed := 0
	for printed < *limit {
		opts.Limit = min(100, *limit-printed)
		page, err := rm.api.Audit(ctx, opts)
		if err != nil {
			return rm.explain(err)
		}
		for _, e := range page.Entries {
			if *asJSON {
				fmt.Fprintln(env.stdout, compactJSON(e))
			} else {
				renderAuditEntry(env.stdout, e)
			}
			printed++
		}
		if !page.Pagination.HasMore || page.Pagination.NextCursor == nil {
			break
		}
		opts.Cursor = *page.Pagination.NextCursor
	}
	if printed == 0 && !*asJSON {
		fmt.Fprintln(env.stdout, "No change recorded matches.")
	}
	return nil
}

// renderAuditEntry prints one entry: a header line (time, key, action, what), then its changes indented.
func renderAuditEntry(w io.Writer, e guard.AuditEntry) {
	key := e.KeyName
	if key == "" {
		key = "(no key: authentication off)"
	}
	what := ""
	if e.ControlID != 0 {
		what = fmt.Sprintf(" control %d", e.ControlID)
		if e.Version != 0 {
			what += fmt.Sprintf(" v%d", e.Version)
		}
	}
	if len(e.Agents) > 0 {
		what += " agents " + strings.Join(e.Agents, ",")
	}
	fmt.Fprintf(w, "%s  %-24s %s%s  (%s %s)\n", e.Time.UTC().Format("2006-01-02 15:04:05Z"), key, e.Action, what, e.Method, e.Path)
	for _, c := range e.Changes {
		fmt.Fprintf(w, "    %s\n", c)
	}
}
