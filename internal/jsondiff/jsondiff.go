// Package jsondiff lists the paths where two generic JSON values (as encoding/json decodes them into
// any) differ: what `guard diff` prints and what the audit trail records of a control's change.
package jsondiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Change is one changed path between two JSON values.
type Change struct {
	Path     string
	Old, New any
	HasOld   bool
	HasNew   bool
}

// String is "~ path: old -> new", "+ path: new" or "- path: old", values as compact JSON.
func (c Change) String() string {
	switch {
	case c.HasOld && c.HasNew:
		return fmt.Sprintf("~ %s: %s -> %s", c.Path, compact(c.Old), compact(c.New))
	case c.HasNew:
		return fmt.Sprintf("+ %s: %s", c.Path, compact(c.New))
	default:
		return fmt.Sprintf("- %s: %s", c.Path, compact(c.Old))
	}
}

func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Diff lists the paths where two generic JSON values differ, in path order: objects key by key,
// arrays index by index, anything else as a leaf. A nil old (or new) means absent: every leaf of the
// other is listed as added (or removed).
func Diff(path string, old, new any) []Change {
	var out []Change
	var walk func(path string, old, new any, hasOld, hasNew bool)
	walk = func(path string, old, new any, hasOld, hasNew bool) {
		om, oMap := old.(map[string]any)
		nm, nMap := new.(map[string]any)
		if (oMap && nMap) || (oMap && !hasNew) || (nMap && !hasOld) {
			keys := make([]string, 0, len(om)+len(nm))
			for k := range om {
				keys = append(keys, k)
			}
			for k := range nm {
				if _, dup := om[k]; !dup {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				ov, ho := om[k]
				nv, hn := nm[k]
				walk(path+"."+k, ov, nv, ho, hn)
			}
			return
		}
		ol, oList := old.([]any)
		nl, nList := new.([]any)
		if (oList && nList) || (oList && !hasNew) || (nList && !hasOld) {
			for i := 0; i < len(ol) || i < len(nl); i++ {
				var ov, nv any
				ho, hn := i < len(ol), i < len(nl)
				if ho {
					ov = ol[i]
				}
				if hn {
					nv = nl[i]
				}
				walk(fmt.Sprintf("%s.%d", path, i), ov, nv, ho, hn)
			}
			return
		}
		if hasOld == hasNew && (!hasOld || compact(old) == compact(new)) {
			return
		}
		out = append(out, Change{Path: path, Old: old, New: new, HasOld: hasOld, HasNew: hasNew})
	}
	walk(path, old, new, old != nil, new != nil)
	return out
}
