package config

import (
	"bytes"
	"fmt"

	yamlnode "go.yaml.in/yaml/v3"
)

// mergeKeys reports whether data, a one-document config file, uses a YAML
// merge key (`<<: *base`), and when it does, why the file cannot be read
// with them ("" = it can).
//
// The strict reader [Parse] uses for a file (a key given twice is an
// error, not a silent last-wins) counts a key merged in and then written
// out as given twice, so a file with merge keys is read by the lenient
// reader instead, and what the strict one would have caught is checked
// here on the document's nodes: a key given twice in one mapping. The
// lenient reader applies a mapping's entries in the order written, a
// merge included, so a merge key must come before the keys of its
// mapping: then a key written out overrides the merged one, as YAML's
// merge says. A file the node parser cannot read is left to the strict
// reader, which reports the syntax error.
func mergeKeys(data []byte) (bool, string) {
	if !bytes.Contains(data, []byte("<<")) {
		return false, ""
	}
	var doc yamlnode.Node
	if err := yamlnode.Unmarshal(data, &doc); err != nil {
		return false, ""
	}
	found, problem := false, ""
	var walk func(n *yamlnode.Node)
	walk = func(n *yamlnode.Node) {
		if n == nil {
			return
		}
		if n.Kind == yamlnode.MappingNode {
			seen := map[string]bool{}
			var firstKey *yamlnode.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if k.Kind == yamlnode.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
					found = true
					if seen["<<"] && problem == "" {
						// Two merge keys: the reader lets the later win,
						// against <<: [*a, *b]'s first-wins order.
						problem = fmt.Sprintf("line %d: a second YAML merge key (<<) in one mapping; merge several with one: <<: [*first, *second] (the first wins)", k.Line)
					}
					seen["<<"] = true
					if firstKey != nil && problem == "" {
						problem = fmt.Sprintf("line %d: a YAML merge key (<<) must come before the keys of its mapping (it follows %q, line %d), so that a key written out overrides the merged one",
							k.Line, firstKey.Value, firstKey.Line)
					}
					continue
				}
				if firstKey == nil {
					firstKey = k
				}
				if k.Kind == yamlnode.ScalarNode {
					if seen[k.Value] && problem == "" {
						// The strict reader's words.
						problem = fmt.Sprintf("yaml: unmarshal errors:\n  line %d: key %q already set in map", k.Line, k.Value)
					}
					seen[k.Value] = true
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	if !found {
		return false, ""
	}
	return true, problem
}
