package classify

import (
	"regexp"
	"strings"
)

// shape is a structural rule anchored on a literal: "N tokens … exceeds …
// limit", "… must be <= …". The anchor (a verb such as "exceed", "must be")
// is found with strings.Index; the left regex must match the text just
// before it (ending at the anchor) and the right regex the text from it
// (starting at the anchor). Each regex sees a short window (lw/rw bytes),
// so it is small and its run is bounded whatever the text's length: a
// shape costs an Aho–Corasick bit test when its gate is absent, and at
// most shapeMaxAnchors windowed matches of ~100 bytes when present.
//
// Windows replace the bounded repetitions ({0,60}) of a single regex,
// which made programs of hundreds of instructions (issue 17, perf).
type shape struct {
	name    string
	gate    *table // the anchors, as AC phrases: no anchor, no work
	need    []*table
	anchors []string
	left    *regexp.Regexp // must end at the anchor (`…$`); nil: no condition
	leftHas []string       // the left window must contain one of these (a cheap prefilter); nil: none
	right   *regexp.Regexp // must start at the anchor (`^…`)
	lw, rw  int
	// notBefore: the match does not count when the text right after it
	// (past spaces) starts with one of these ("stream closed due to an
	// error from …": the closure names its cause).
	notBefore []string
}

// shapeMaxAnchors bounds the anchor occurrences tried per text (a long
// body that repeats "exceed" hundreds of times is not an overflow message).
const shapeMaxAnchors = 16

func newShape(name string, anchors []string, lw int, left string, rw int, right string) *shape {
	sh := &shape{name: name, gate: newTable(name+".gate", anchors...), anchors: anchors, lw: lw, rw: rw}
	if left != "" {
		sh.left = regexp.MustCompile(`(?:` + left + `)$`)
	}
	sh.right = regexp.MustCompile(`^(?:` + right + `)`)
	return sh
}

// and adds a required phrase group (see pattern.and).
func (sh *shape) and(phrases ...string) *shape {
	sh.need = append(sh.need, newTable(sh.name+".and", phrases...))
	return sh
}

// unless sets notBefore.
func (sh *shape) unless(words ...string) *shape {
	sh.notBefore = words
	return sh
}

func startsWithAny(s string, words []string) bool {
	s = strings.TrimLeft(s, " \t,:")
	for _, w := range words {
		if strings.HasPrefix(s, w) {
			return true
		}
	}
	return false
}

// leftWith sets the left window's literal prefilter: an end-anchored regex
// tries every start, so a strings.Contains first is cheaper.
func (sh *shape) leftWith(words ...string) *shape {
	sh.leftHas = words
	return sh
}

func containsAny(s string, words []string) bool {
	if words == nil {
		return true
	}
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func (sh *shape) search(t *text) (string, bool) { return sh.find(t) }

// find returns the first match (in anchor order, then position).
func (sh *shape) find(t *text) (string, bool) {
	if !sh.gate.in(&t.hits) {
		return "", false
	}
	for _, n := range sh.need {
		if !n.in(&t.hits) {
			return "", false
		}
	}
	s := t.lower
	for _, a := range sh.anchors {
		for from, tries := 0, 0; tries < shapeMaxAnchors; {
			k := strings.Index(s[from:], a)
			if k < 0 {
				break
			}
			i := from + k
			from = i + len(a)
			tries++
			if i > 0 && isWordByte(s[i-1]) {
				continue
			}
			r := sh.right.FindStringIndex(s[i:min(len(s), i+sh.rw)])
			if r == nil {
				continue
			}
			if sh.notBefore != nil && startsWithAny(s[i+r[1]:min(len(s), i+r[1]+48)], sh.notBefore) {
				continue
			}
			start := i
			if sh.left != nil {
				w := s[max(0, i-sh.lw):i]
				if !containsAny(w, sh.leftHas) {
					continue
				}
				l := sh.left.FindStringIndex(w)
				if l == nil {
					continue
				}
				start = i - len(w) + l[0]
			}
			return s[start : i+r[1]], true
		}
	}
	return "", false
}
