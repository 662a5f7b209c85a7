package policyfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// checkJSONDuplicates reports the first object key that appears twice in one object of a JSON document
// (encoding/json would silently keep the last one; the YAML reader refuses them too).
func checkJSONDuplicates(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if seen[k] {
					return fmt.Errorf("%s: key %q appears twice", orTop(path), k)
				}
				seen[k] = true
				if err := walk(join(path, k)); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if err := walk(join(path, strconv.Itoa(i))); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	return walk("")
}
