package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// withoutProfile returns the config file raw (JSON) without profile id:
// its auth.profiles entry goes, and so does its place in every auth.order
// list (a list it leaves empty is dropped, so the provider falls back to
// the default order). Every other key is kept as written.
func withoutProfile(raw json.RawMessage, id string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree map[string]any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	auth, _ := tree["auth"].(map[string]any)
	profiles, _ := auth["profiles"].(map[string]any)
	if _, ok := profiles[id]; !ok {
		return nil, fmt.Errorf("%q is not in the config's auth.profiles", id)
	}
	delete(profiles, id)
	if order, ok := auth["order"].(map[string]any); ok {
		for prov, v := range order {
			ids, _ := v.([]any)
			kept := make([]any, 0, len(ids))
			for _, x := range ids {
				if x != id {
					kept = append(kept, x)
				}
			}
			if len(kept) == 0 {
				delete(order, prov)
			} else {
				order[prov] = kept
			}
		}
	}
	out, err := json.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return out, nil
}
