package policyfile

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	yaml "go.yaml.in/yaml/v2"
)

// Write writes pol as one YAML document that Load reads back to the same policy: controls sorted by name
// (name, then data with its keys sorted), then agents sorted by name with their control names sorted. IDs
// and tests are not written. The output depends only on the policy, so an exported file diffs cleanly in
// git.
func Write(w io.Writer, pol *Policy) error {
	controls := append([]Control(nil), pol.Controls...)
	sort.Slice(controls, func(i, j int) bool { return controls[i].Name < controls[j].Name })
	agents := append([]Agent(nil), pol.Agents...)
	sort.Slice(agents, func(i, j int) bool { return agents[i].Name < agents[j].Name })

	cs := make([]yaml.MapSlice, 0, len(controls))
	for _, c := range controls {
		raw, err := json.Marshal(c.Data)
		if err != nil {
			return fmt.Errorf("policyfile: encode control %q: %w", c.Name, err)
		}
		var data any
		if err := json.Unmarshal(raw, &data); err != nil {
			return fmt.Errorf("policyfile: encode control %q: %w", c.Name, err)
		}
		cs = append(cs, yaml.MapSlice{{Key: "name", Value: c.Name}, {Key: "data", Value: data}})
	}
	as := make([]yaml.MapSlice, 0, len(agents))
	for _, a := range agents {
		names := append([]string{}, a.Controls...)
		sort.Strings(names)
		as = append(as, yaml.MapSlice{{Key: "name", Value: a.Name}, {Key: "controls", Value: names}})
	}
	doc := yaml.MapSlice{{Key: "controls", Value: cs}, {Key: "agents", Value: as}}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("policyfile: encode: %w", err)
	}
	_, err = w.Write(out)
	return err
}
