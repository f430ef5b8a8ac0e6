package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/brabo-dev/brabo/policy/internal/shell"
)

// AppendAllow returns the content of a permissions file with patterns added
// to its allow list, and the patterns that were missing (only those are
// added). Every other key, known or not, is kept as it was; an empty input
// is an empty file. The result is validated: AppendAllow never returns a
// file that Parse refuses.
func AppendAllow(data []byte, patterns []string) (out []byte, added []string, err error) {
	top := map[string]json.RawMessage{}
	var order []string
	if len(bytes.TrimSpace(data)) > 0 {
		if order, err = keyOrder(data); err != nil {
			return nil, nil, fmt.Errorf("permissions.json: %w", err)
		}
		if err := json.Unmarshal(data, &top); err != nil {
			return nil, nil, fmt.Errorf("permissions.json: %w", err)
		}
	}
	var allow []string
	if raw, ok := top["allow"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &allow); err != nil {
			return nil, nil, fmt.Errorf("permissions.json: allow must be a list of strings: %w", err)
		}
	}
	for _, p := range patterns {
		if !shell.ContainsString(allow, p) && !shell.ContainsString(added, p) {
			added = append(added, p)
		}
	}
	if len(added) == 0 {
		return data, nil, nil
	}
	allow = append(allow, added...)
	raw, err := json.Marshal(allow)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := top["allow"]; !ok {
		order = append([]string{"allow"}, order...)
	}
	top["allow"] = raw
	if out, err = writeTopLevel(order, top); err != nil {
		return nil, nil, err
	}
	return out, added, nil
}

// keyOrder returns the top-level keys of a JSON object in file order.
func keyOrder(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("must be a JSON object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		if !shell.ContainsString(keys, k) {
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
