package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/guardrail-control/guard/client"
)

func init() {
	register(&command{name: "replay", summary: "replay an agent's captured steps against the controls of policy files and show which decisions would change",
		usage: replayUsage, run: runReplay, env: remoteEnv})
}

const replayUsage = "guard replay -f FILE... [--agent NAME] [--since 24h] [--limit N] [--samples N] [--server URL]"

// runReplay is `guard replay`: the controls of the files are the draft (matched to the server's controls
// by name; a name the server does not have is a new control), replayed by POST /controls/replay against
// the steps the server captured (GUARD_CAPTURE_AGENTS). It prints the difference and exits 0; it changes
// nothing on the server.
func runReplay(ctx context.Context, env *commandEnv, args []string) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var files fileList
	fs.Var(&files, "f", "a policy file (YAML or JSON; - for the standard input) whose controls are the draft; repeat the flag, or list more files")
	agent := fs.String("agent", "", "the agent whose captured steps are replayed (default: every agent)")
	since := fs.Duration("since", 24*time.Hour, "replay the steps captured in this last period (e.g. 30m, 24h, 168h)")
	limit := fs.Int("limit", 0, "replay at most this many steps, oldest first (default the server's, 10000; at most 100000)")
	samples := fs.Int("samples", 3, "changed steps shown per kind of change (0 to 50)")
	var rf remoteFlags
	rf.register(fs)
	rest, err := parsePolicyFlags(fs, replayUsage, args)
	if err != nil {
		return err
	}
	files = append(files, rest...)
	if len(files) == 0 {
		return usageFail(fs, "no file given")
	}
	if *since <= 0 {
		return usageFail(fs, "--since must be a positive duration")
	}
	pol, err := loadPolicy(files, env)
	if err != nil {
		return err
	}
	if len(pol.Controls) == 0 {
		return usageFail(fs, "the files hold no control to replay")
	}
	rm, err := rf.connect(env, true)
	if err != nil {
		return usageFail(fs, err.Error())
	}
	req := client.ReplayRequest{AgentName: *agent, Limit: *limit, SampleSize: samples}
	req.End = time.Now()
	req.Start = req.End.Add(-*since)
	for _, c := range pol.Controls {
		req.Controls = append(req.Controls, client.DraftControl{Name: c.Name, Data: c.Data})
	}
	// The replay's own timeout is the server's (a job); each request keeps --timeout.
	res, err := rm.api.Replay(ctx, req, 500*time.Millisecond, func(j *client.ReplayJob) {
		fmt.Fprintf(env.stderr, "replaying: %d of %d steps\n", j.Progress.StepsDone, j.Progress.StepsTotal)
	})
	if err != nil {
		return rm.explain(err)
	}
	renderReplay(env.stdout, res)
	return nil
}

// renderReplay prints a replay's result for a terminal: what was replayed, the changes by kind, the
// controls whose matches change, and the samples.
func renderReplay(w io.Writer, res *client.ReplayResult) {
	who := "every agent"
	if res.AgentName != nil {
		who = "agent " + *res.AgentName
	}
	const tf = "2006-01-02 15:04 MST"
	fmt.Fprintf(w, "Replayed %d captured steps of %s from %s to %s (%.0f ms).\n", res.StepsReplayed, who,
		res.StartTime.UTC().Format(tf), res.EndTime.UTC().Format(tf), res.DurationMS)
	if res.Truncated {
		fmt.Fprintf(w, "More steps were captured in this range: only the oldest %d were replayed (--limit).\n", res.Limit)
	}
	if res.StepsSkipped > 0 {
		fmt.Fprintf(w, "%d steps of agents that no longer exist were skipped.\n", res.StepsSkipped)
	}
	if res.Message != "" {
		fmt.Fprintln(w, res.Message)
	}
	if res.StepsChanged == 0 {
		fmt.Fprintln(w, "No decision would change.")
	} else {
		fmt.Fprintf(w, "%d of %d steps would change decision:\n", res.StepsChanged, res.StepsReplayed)
		kinds := make([]string, 0, len(res.Changes))
		for k := range res.Changes {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			fmt.Fprintf(w, "  %-18s %d\n", kindText(k), res.Changes[k])
		}
	}
	var changed []client.ReplayControl
	for _, c := range res.Controls {
		if c.NewlyMatched > 0 || c.NoLongerMatched > 0 || c.ErrorsCurrent != c.ErrorsDraft {
			changed = append(changed, c)
		}
	}
	if len(changed) > 0 {
		fmt.Fprintln(w, "\nControls whose matches change:")
		for _, c := range changed {
			id := "new"
			if c.ControlID != nil {
				id = fmt.Sprintf("id %d", *c.ControlID)
			}
			fmt.Fprintf(w, "  %s (%s): matched %d -> %d steps (+%d newly, -%d no longer)", c.ControlName, id,
				c.MatchedCurrent, c.MatchedDraft, c.NewlyMatched, c.NoLongerMatched)
			if c.ErrorsCurrent != c.ErrorsDraft {
				fmt.Fprintf(w, ", errors %d -> %d", c.ErrorsCurrent, c.ErrorsDraft)
			}
			fmt.Fprintln(w)
		}
	}
	if len(res.Samples) > 0 {
		fmt.Fprintln(w, "\nSamples:")
		for _, s := range res.Samples {
			fmt.Fprintf(w, "  [%s] step %d of %s at %s, %s stage\n", kindText(s.Kind), s.StepID, s.AgentName,
				s.Timestamp.UTC().Format(time.RFC3339), s.Stage)
			fmt.Fprintf(w, "    step:    %s\n", clip(string(s.Step), 200))
			fmt.Fprintf(w, "    current: %s\n", outcomeText(s.Current))
			fmt.Fprintf(w, "    draft:   %s\n", outcomeText(s.Draft))
		}
	}
}

// kindText turns "allow_to_deny" into "allow -> deny".
func kindText(k string) string {
	if from, to, ok := strings.Cut(k, "_to_"); ok {
		return from + " -> " + to
	}
	return strings.ReplaceAll(k, "_", " ")
}

func outcomeText(o client.ReplayOutcome) string {
	s := string(o.Decision)
	if len(o.Matched) > 0 {
		s += " (matched: " + strings.Join(o.Matched, ", ") + ")"
	}
	if len(o.Errors) > 0 {
		s += " (errors: " + strings.Join(o.Errors, ", ") + ")"
	}
	if o.SteeringContext != nil && o.SteeringContext.Message != "" {
		s += ": " + clip(o.SteeringContext.Message, 120)
	}
	return s
}

// clip shortens s to n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
