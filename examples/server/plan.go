package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/client/policyfile"
	"github.com/guardrail-control/guard/internal/jsondiff"
)

// This file computes what `guard apply` must do to make a server hold what policy files say, and renders
// that plan as a readable diff. It is pure: the server's state comes in as a remoteState, so the plan is
// unit-tested without a server.

// remoteControl is a control as the server holds it.
type remoteControl struct {
	ID         int64
	Name       string
	Version    int // the ETag apply sends back in If-Match
	Enabled    bool
	Data       *guard.ControlData // nil: created without data
	AgentCount int
}

// remoteState is what apply compares the files with: every live control by name, and the links of the
// agents that exist (by agent name; an agent missing from the map does not exist).
type remoteState struct {
	Controls map[string]remoteControl
	Agents   map[string][]string
}

// controlChange is one control to create, update or delete.
type controlChange struct {
	Name   string
	Remote remoteControl      // zero for a create
	Data   *guard.ControlData // the desired data (create, update); nil for a delete
	// DataDiff lists the changed paths of the data (enabled aside); empty when only enabled changes.
	DataDiff []jsonChange
	// Enable is the desired enabled flag when it changes (update), nil otherwise.
	Enable *bool
}

// agentChange is one agent to create and/or whose links change.
type agentChange struct {
	Name   string
	Create bool     // the agent does not exist: apply registers it (initAgent, no steps)
	Link   []string // control names to link, sorted
	Unlink []string // control names to unlink, sorted
}

// plan is everything apply does, in the order it does it: creates, updates, agents, deletes.
type plan struct {
	Creates []controlChange
	Updates []controlChange
	Agents  []agentChange
	Deletes []controlChange // only with --prune
}

// empty reports whether the server already matches the files.
func (p *plan) empty() bool {
	return len(p.Creates)+len(p.Updates)+len(p.Agents)+len(p.Deletes) == 0
}

// computePlan compares the desired policy with the server's state. Controls are matched by name. A
// control's data is compared as canonical JSON with enabled aside, so a new version is written only when
// the data changed, and a change of enabled alone is a PATCH. Agents named in the files get exactly the
// links the files list; agents the files do not name are left alone. With prune, live controls the files
// do not name are deleted (the server unlinks them from every agent).
func computePlan(desired *policyfile.Policy, state remoteState, prune bool) (plan, error) {
	var p plan
	named := map[string]bool{}
	for _, c := range desired.Controls {
		named[c.Name] = true
		data := c.Data
		r, exists := state.Controls[c.Name]
		if !exists {
			p.Creates = append(p.Creates, controlChange{Name: c.Name, Data: &data})
			continue
		}
		ch := controlChange{Name: c.Name, Remote: r, Data: &data}
		var have any
		if r.Data != nil {
			old := *r.Data
			h, err := canonicalData(old)
			if err != nil {
				return plan{}, err
			}
			have = h
		}
		want, err := canonicalData(data)
		if err != nil {
			return plan{}, err
		}
		if have == nil {
			ch.DataDiff = newDataChanges(want) // every path is new: what differs from the defaults
		} else {
			ch.DataDiff = diffJSON("data", have, want)
		}
		if len(ch.DataDiff) == 0 && r.Enabled != data.Enabled {
			en := data.Enabled
			ch.Enable = &en
		}
		if len(ch.DataDiff) > 0 || ch.Enable != nil {
			if len(ch.DataDiff) > 0 && r.Enabled != data.Enabled {
				en := data.Enabled
				ch.Enable = &en // the data write carries it
			}
			p.Updates = append(p.Updates, ch)
		}
	}
	for _, a := range desired.Agents {
		have, exists := state.Agents[a.Name]
		ch := agentChange{Name: a.Name, Create: !exists}
		haveSet := setOf(have)
		wantSet := setOf(a.Controls)
		for _, n := range a.Controls {
			if !haveSet[n] {
				ch.Link = append(ch.Link, n)
			}
		}
		for _, n := range have {
			if !wantSet[n] {
				ch.Unlink = append(ch.Unlink, n)
			}
		}
		sort.Strings(ch.Link)
		sort.Strings(ch.Unlink)
		if ch.Create || len(ch.Link) > 0 || len(ch.Unlink) > 0 {
			p.Agents = append(p.Agents, ch)
		}
	}
	if prune {
		for name, r := range state.Controls {
			if !named[name] {
				p.Deletes = append(p.Deletes, controlChange{Name: name, Remote: r})
			}
		}
	}
	byName := func(l []controlChange) {
		sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
	}
	byName(p.Creates)
	byName(p.Updates)
	byName(p.Deletes)
	sort.Slice(p.Agents, func(i, j int) bool { return p.Agents[i].Name < p.Agents[j].Name })
	return p, nil
}

func setOf(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

// canonicalData is control data as a generic JSON value, enabled left out (it is compared on its own):
// encoding/json writes struct fields in a fixed order and map keys sorted, so two equal data give equal
// values whatever order the file or the server wrote them in.
func canonicalData(d guard.ControlData) (any, error) {
	d.Enabled = false
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode control data: %w", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "enabled")
	}
	return v, nil
}

// render writes the plan as a readable diff: + create, ~ update, - delete, one block per control or
// agent, then a summary line.
func (p *plan) render(w io.Writer) {
	if p.empty() {
		fmt.Fprintln(w, "No changes: the server matches the files.")
		return
	}
	for _, c := range p.Creates {
		fmt.Fprintf(w, "+ control %s (create)\n", c.Name)
		for _, line := range dataLines(c.Data) {
			fmt.Fprintf(w, "    + %s\n", line)
		}
	}
	for _, c := range p.Updates {
		fmt.Fprintf(w, "~ control %s (id %d, version %d)\n", c.Name, c.Remote.ID, c.Remote.Version)
		if c.Enable != nil {
			fmt.Fprintf(w, "    ~ enabled: %t -> %t\n", c.Remote.Enabled, *c.Enable)
		}
		for _, d := range c.DataDiff {
			fmt.Fprintf(w, "    %s\n", d)
		}
	}
	for _, a := range p.Agents {
		if a.Create {
			fmt.Fprintf(w, "+ agent %s (create, no steps)\n", a.Name)
		} else {
			fmt.Fprintf(w, "~ agent %s\n", a.Name)
		}
		for _, n := range a.Link {
			fmt.Fprintf(w, "    + link %s\n", n)
		}
		for _, n := range a.Unlink {
			fmt.Fprintf(w, "    - link %s\n", n)
		}
	}
	for _, c := range p.Deletes {
		linked := ""
		if c.Remote.AgentCount > 0 {
			linked = fmt.Sprintf("; linked to %d agent%s now", c.Remote.AgentCount, pluralSuffix(c.Remote.AgentCount))
		}
		fmt.Fprintf(w, "- control %s (id %d, delete%s)\n", c.Name, c.Remote.ID, linked)
	}
	fmt.Fprintln(w, p.summary())
}

// summary is the one-line count of the plan.
func (p *plan) summary() string {
	agents := len(p.Agents)
	return fmt.Sprintf("Plan: %d control%s to create, %d to update, %d to delete; %d agent%s to change.",
		len(p.Creates), pluralSuffix(len(p.Creates)), len(p.Updates), len(p.Deletes), agents, pluralSuffix(agents))
}

// dataLines is new data as "path: value" lines (the diff against nothing).
func dataLines(d *guard.ControlData) []string {
	v, err := canonicalData(*d)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, c := range newDataChanges(v) {
		out = append(out, strings.TrimPrefix(c.String(), "+ "))
	}
	out = append(out, "data.enabled: "+fmt.Sprint(d.Enabled))
	sort.Strings(out)
	return out
}

// defaultLines are the "path: value" lines of control data that says nothing beyond the defaults (no
// description, server execution, empty lists): a new control's plan leaves them out, so that it shows what
// the file sets rather than every field the data type has.
var defaultLines = func() map[string]bool {
	v, err := canonicalData(guard.ControlData{Execution: guard.ExecutionServer})
	if err != nil {
		panic(err)
	}
	lines := map[string]bool{}
	for _, c := range diffJSON("data", nil, v) {
		lines[c.String()] = true
	}
	return lines
}()

// newDataChanges is the diff of new data against nothing, without the lines that only restate a default.
func newDataChanges(v any) []jsonChange {
	var out []jsonChange
	for _, c := range diffJSON("data", nil, v) {
		if !defaultLines[c.String()] {
			out = append(out, c)
		}
	}
	return out
}

// jsonChange is one changed path between two JSON values (internal/jsondiff, shared with the server's
// audit trail).
type jsonChange = jsondiff.Change

// diffJSON lists the paths where two generic JSON values differ (jsondiff.Diff).
func diffJSON(path string, old, new any) []jsonChange { return jsondiff.Diff(path, old, new) }
