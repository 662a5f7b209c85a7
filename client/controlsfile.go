package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// fileControl is one entry of a controls file. ID is optional: without it the control gets its position
// in the file (1, 2, ...), which is what its events and errors carry.
type fileControl struct {
	ID   int64           `json:"id,omitempty"`
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
}

// LoadControlsFile reads a controls file (contract section 8):
//
//	controls:
//	  - name: block-ssn
//	    data: {...}   # a ControlData object
//
// Each control's data goes through guard.ParseControlData (defaults, legacy form, validation). Evaluators
// reg does not have are accepted; in-process they fall to their on_error. Any problem is an error that
// names the control and the field (controls.<i>.data.<field>).
func LoadControlsFile(path string, reg *evaluator.Registry) ([]guard.Control, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("guard client: controls file: %w", err)
	}
	return parseControlsFile(path, raw, reg)
}

func parseControlsFile(path string, raw []byte, reg *evaluator.Registry) ([]guard.Control, error) {
	if reg == nil {
		reg = evaluator.Default
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("guard client: controls file %s: not valid YAML: %w", path, err)
	}
	var doc struct {
		Controls []fileControl `json:"controls"`
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("guard client: controls file %s: expected a top-level \"controls\" list of {id?, name, data}: %w", path, err)
	}
	out := make([]guard.Control, 0, len(doc.Controls))
	seen := map[string]bool{}
	for i, fc := range doc.Controls {
		where := fmt.Sprintf("controls.%d", i)
		if err := guard.ValidateControlName(fc.Name); err != nil {
			return nil, fmt.Errorf("guard client: controls file %s: %s.name: %w", path, where, err)
		}
		if seen[fc.Name] {
			return nil, fmt.Errorf("guard client: controls file %s: %s.name: control %q appears twice", path, where, fc.Name)
		}
		seen[fc.Name] = true
		if len(fc.Data) == 0 || string(fc.Data) == "null" {
			return nil, fmt.Errorf("guard client: controls file %s: control %q: %s.data is required", path, fc.Name, where)
		}
		d, err := guard.ParseControlData(fc.Data, guard.WithValidationRegistry(reg), guard.AllowUnknownEvaluators())
		if err != nil {
			var ve *guard.ValidationError
			if errors.As(err, &ve) {
				err = ve.WithPrefix(where + ".data")
			}
			return nil, fmt.Errorf("guard client: controls file %s: control %q: %w", path, fc.Name, err)
		}
		id := fc.ID
		if id <= 0 {
			id = int64(i + 1)
		}
		out = append(out, guard.Control{ID: id, Name: fc.Name, Data: d})
	}
	return out, nil
}
