package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/guardrail-control/guard/client"
)

func init() {
	register(&command{name: "approvals", summary: "list, show, approve or reject the approval requests of controls with action.approval",
		usage: approvalsUsage, run: runApprovals, env: remoteEnv})
}

const approvalsUsage = "guard approvals list [--agent NAME] [--status pending|approved|rejected|expired] [--limit N] | show ID | approve ID [--comment TEXT] | reject ID [--comment TEXT]  [--server URL]"

// runApprovals is `guard approvals`: the approval requests (docs/approvals.md) from a terminal. list and
// show need a key that may read (GUARD_API_KEY, regular or admin); approve and reject an admin key or a
// key with the approve permission.
func runApprovals(ctx context.Context, env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("approvals", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	agent := fs.String("agent", "", "list: only this agent's requests")
	status := fs.String("status", "", "list: only requests in this status (pending, approved, rejected, expired)")
	limit := fs.Int("limit", 20, "list: at most this many requests (1 to 100)")
	comment := fs.String("comment", "", "approve, reject: a comment recorded with the decision")
	var rf remoteFlags
	rf.register(fs)
	pos, err := parsePolicyFlags(fs, approvalsUsage, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageFail(fs, "say what to do: list, show, approve or reject")
	}
	verb, rest := pos[0], pos[1:]
	wantArgs := 1
	if verb == "list" {
		wantArgs = 0
	}
	switch verb {
	case "list", "show", "approve", "reject":
	default:
		return usageFail(fs, fmt.Sprintf("unknown action %q: list, show, approve or reject", verb))
	}
	if len(rest) != wantArgs {
		if wantArgs == 0 {
			return usageFail(fs, "list takes no argument")
		}
		return usageFail(fs, verb+" needs one request id")
	}
	if *limit < 1 || *limit > 100 {
		return usageFail(fs, "--limit must be from 1 to 100")
	}
	rm, err := rf.connect(env, verb == "approve" || verb == "reject")
	if err != nil {
		return usageFail(fs, err.Error())
	}
	switch verb {
	case "list":
		l, err := rm.api.ListApprovals(ctx, client.ApprovalListOptions{AgentName: *agent, Status: *status, Limit: *limit})
		if err != nil {
			return rm.explain(err)
		}
		renderApprovalList(env.stdout, l)
	case "show":
		a, err := rm.api.GetApproval(ctx, rest[0], 0)
		if err != nil {
			return rm.explain(err)
		}
		renderApproval(env.stdout, &a)
	default:
		a, err := rm.api.DecideApproval(ctx, rest[0], verb == "approve", *comment)
		if err != nil {
			return explainDecision(rm, err)
		}
		fmt.Fprintf(env.stdout, "Request %s is %s.\n", a.ID, a.Status)
		if a.Grant != "" {
			fmt.Fprintf(env.stdout, "The agent may now run this exact step once, until %s (it reads the grant with GET %s).\n",
				a.GrantExpiresAt.Local().Format(time.RFC3339), a.URL)
		}
	}
	return nil
}

func renderApprovalList(w io.Writer, l []client.Approval) {
	if len(l) == 0 {
		fmt.Fprintln(w, "No approval request.")
		return
	}
	fmt.Fprintf(w, "%-36s  %-8s  %-20s  %-24s  %-20s  %s\n", "ID", "STATUS", "AGENT", "CONTROL", "STEP", "OPENED")
	for _, a := range l {
		fmt.Fprintf(w, "%-36s  %-8s  %-20s  %-24s  %-20s  %s\n", a.ID, a.Status, a.AgentName, a.ControlName,
			a.StepType+" "+a.StepName, a.CreatedAt.Local().Format("2006-01-02 15:04:05"))
	}
}

func renderApproval(w io.Writer, a *client.Approval) {
	fmt.Fprintf(w, "Request %s: %s\n", a.ID, a.Status)
	fmt.Fprintf(w, "Agent:    %s\n", a.AgentName)
	fmt.Fprintf(w, "Control:  %s (id %d, version %d)\n", a.ControlName, a.ControlID, a.ControlVersion)
	fmt.Fprintf(w, "Step:     %s %s, stage %s\n", a.StepType, a.StepName, a.Stage)
	if a.Message != "" {
		fmt.Fprintf(w, "Message:  %s\n", a.Message)
	}
	if len(a.Approvers) > 0 {
		fmt.Fprintf(w, "Approvers: %s\n", strings.Join(a.Approvers, ", "))
	}
	fmt.Fprintf(w, "Opened:   %s, expires %s\n", a.CreatedAt.Local().Format(time.RFC3339), a.ExpiresAt.Local().Format(time.RFC3339))
	fmt.Fprintf(w, "Payload hash: %s\n", a.PayloadHash)
	if a.DecidedAt != nil {
		fmt.Fprintf(w, "Decided:  %s by %s", a.DecidedAt.Local().Format(time.RFC3339), a.DecidedBy)
		if a.Comment != "" {
			fmt.Fprintf(w, ": %q", a.Comment)
		}
		fmt.Fprintln(w)
	}
	if a.UsedAt != nil {
		fmt.Fprintf(w, "Used:     %s (control_execution_id %s)\n", a.UsedAt.Local().Format(time.RFC3339), a.UsedExecutionID)
	}
	var step any
	if json.Unmarshal(a.Step, &step) == nil {
		pretty, _ := json.MarshalIndent(step, "", "  ")
		fmt.Fprintf(w, "What would run:\n%s\n", pretty)
	}
}

// decidingKeys names the keys that may decide an approval request.
const decidingKeys = "an admin key (GUARD_ADMIN_API_KEYS) or a key with the approve permission (\"approve\": true in GUARD_API_KEYS_FILE)"

// explainDecision is remote.explain for approve and reject: a key that may not decide is told which keys
// may (remote.explain speaks of changing policy and of admin keys only).
func explainDecision(r *remote, err error) error {
	var ae *client.APIError
	if errors.As(err, &ae) {
		switch {
		case ae.Status == http.StatusForbidden:
			return fmt.Errorf("the key in GUARD_API_KEY may not decide approval requests on %s: set it to %s", r.url, decidingKeys)
		case ae.Status == http.StatusUnauthorized && !r.hasKey:
			return fmt.Errorf("the server at %s requires an API key to decide: set GUARD_API_KEY to %s", r.url, decidingKeys)
		case ae.Status == http.StatusUnauthorized:
			return fmt.Errorf("the server at %s does not accept the key in GUARD_API_KEY: set it to %s", r.url, decidingKeys)
		}
	}
	return r.explain(err)
}
