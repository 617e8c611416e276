package classify

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Phrase matching.
//
// Every marker table (tables.go) registers its lower-case phrases here. At
// first use all phrases are compiled into one Aho–Corasick automaton, so a
// text is lower-cased once and scanned once, in a single pass, whatever the
// number of tables; each table check afterwards is a few bit tests.
//
// Phrase syntax: a leading or trailing `\b` asks for a word boundary on that
// side (the neighbouring byte is not [a-z0-9_]), e.g. `\btpm\b`, `\b401\b`.
// Everything else is a literal, lower-case substring (CJK included).

type phraseID uint16

// phraseWords bounds the number of distinct phrases (64 per word).
const phraseWords = 32

// phraseSet is the set of phrases found in one text.
type phraseSet [phraseWords]uint64

func (s *phraseSet) set(id phraseID)      { s[id>>6] |= 1 << (id & 63) }
func (s *phraseSet) has(id phraseID) bool { return s[id>>6]&(1<<(id&63)) != 0 }

type phrase struct {
	s            string
	lword, rword bool
}

var phraseBook struct {
	list  []phrase
	index map[string]phraseID
}

// table is one named list of phrases (a marker table).
type table struct {
	name   string
	ids    []phraseID
	mask   phraseSet
	w0, w1 int // the mask's non-zero words are within [w0, w1]
}

// newTable registers phrases under name. It must run during package variable
// initialisation, before the automaton is compiled on first use.
func newTable(name string, phrases ...string) *table {
	if phraseBook.index == nil {
		phraseBook.index = map[string]phraseID{}
	}
	t := &table{name: name, w0: phraseWords}
	for _, src := range phrases {
		p := parsePhrase(src)
		if p.s == "" || p.s != strings.ToLower(p.s) {
			panic(fmt.Sprintf("classify: table %s: phrase %q must be non-empty lower case", name, src))
		}
		id, ok := phraseBook.index[src]
		if !ok {
			if len(phraseBook.list) >= phraseWords*64 {
				panic("classify: too many phrases; raise phraseWords")
			}
			id = phraseID(len(phraseBook.list))
			phraseBook.list = append(phraseBook.list, p)
			phraseBook.index[src] = id
		}
		t.ids = append(t.ids, id)
		t.mask.set(id)
		t.w0, t.w1 = min(t.w0, int(id>>6)), max(t.w1, int(id>>6))
	}
	return t
}

// find returns the first phrase of t (in table order) present in hits.
func (t *table) find(hits *phraseSet) (string, bool) {
	if !t.in(hits) {
		return "", false
	}
	for _, id := range t.ids {
		if hits.has(id) {
			return phraseBook.list[id].s, true
		}
	}
	return "", false
}

// in reports whether any phrase of t is present.
func (t *table) in(hits *phraseSet) bool {
	for i := t.w0; i <= t.w1; i++ {
		if hits[i]&t.mask[i] != 0 {
			return true
		}
	}
	return false
}

// pattern is a regular expression that only runs when one of its gate
// phrases is present, so the common case costs a bit test, not a regex.
type pattern struct {
	gate *table
	need []*table
	re   *regexp.Regexp
}

func newPattern(name, re string, gate ...string) *pattern {
	return &pattern{gate: newTable(name+".gate", gate...), re: regexp.MustCompile(re)}
}

// find returns the leftmost match in t.lower.
func (p *pattern) find(t *text) (string, bool) {
	if p.gate != nil && !p.gate.in(&t.hits) {
		return "", false
	}
	for _, n := range p.need {
		if !n.in(&t.hits) {
			return "", false
		}
	}
	m := p.re.FindStringIndex(t.lower)
	if m == nil {
		return "", false
	}
	return t.lower[m[0]:m[1]], true
}

// automaton is a dense Aho–Corasick DFA over byte classes.
type automaton struct {
	class    [256]uint16
	width    int
	next     []int32    // state*width + class -> state; ^state when it has outputs
	outStart []int32    // outIDs[outStart[s]:outStart[s+1]] are the phrases ending at s
	outIDs   []phraseID // (own outputs plus those of the suffix-link chain)
}

// The automaton is built on first use (about 2 ms), so fledger commands
// that never classify do not pay for it at start-up.
var (
	matcher      *automaton
	matcherOnce  sync.Once
	staticPhrase map[string]bool // every phrase text: evidence equal to one needs no redaction
)

func compiled() *automaton {
	matcherOnce.Do(func() {
		matcher = buildAutomaton(phraseBook.list)
		staticPhrase = make(map[string]bool, len(phraseBook.list))
		for _, p := range phraseBook.list {
			staticPhrase[p.s] = true
		}
	})
	return matcher
}

func buildAutomaton(list []phrase) *automaton {
	a := &automaton{}
	// Byte classes: every byte used by a phrase gets its own class; all other
	// bytes share class 0.
	w := 1
	for _, p := range list {
		for i := 0; i < len(p.s); i++ {
			if a.class[p.s[i]] == 0 {
				a.class[p.s[i]] = uint16(w)
				w++
			}
		}
	}
	a.width = w
	// Trie, built directly in the dense table: -1 is "no edge yet".
	maxStates := 1
	for _, p := range list {
		maxStates += len(p.s)
	}
	next := make([]int32, w, maxStates*w)
	for i := range next {
		next[i] = -1
	}
	own := [][]phraseID{nil}
	for id, p := range list {
		s := int32(0)
		for i := 0; i < len(p.s); i++ {
			c := int32(a.class[p.s[i]])
			t := next[s*int32(w)+c]
			if t < 0 {
				t = int32(len(own))
				own = append(own, nil)
				for k := 0; k < w; k++ {
					next = append(next, -1)
				}
				next[s*int32(w)+c] = t
			}
			s = t
		}
		own[s] = append(own[s], phraseID(id))
	}
	// Breadth-first: failure links turn the trie into a full DFA.
	n := len(own)
	fail := make([]int32, n)
	outs := make([][]phraseID, n)
	queue := make([]int32, 0, n)
	for c := 0; c < w; c++ {
		if t := next[c]; t >= 0 {
			queue = append(queue, t)
		} else {
			next[c] = 0
		}
	}
	outs[0] = own[0]
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		outs[s] = append(append([]phraseID(nil), own[s]...), outs[fail[s]]...)
		for c := 0; c < w; c++ {
			i := int(s)*w + c
			if t := next[i]; t >= 0 {
				fail[t] = next[int(fail[s])*w+c]
				queue = append(queue, t)
			} else {
				next[i] = next[int(fail[s])*w+c]
			}
		}
	}
	a.next = append([]int32(nil), next[:n*w]...) // right-sized; the build buffer is freed
	a.outStart = make([]int32, n+1)
	for s := 0; s < n; s++ {
		a.outStart[s] = int32(len(a.outIDs))
		a.outIDs = append(a.outIDs, outs[s]...)
	}
	a.outStart[n] = int32(len(a.outIDs))
	for i, t := range a.next {
		if a.outStart[t+1] > a.outStart[t] {
			a.next[i] = ^t
		}
	}
	return a
}

// scan adds to hits every phrase found in lower (already lower-cased).
func (a *automaton) scan(lower string, hits *phraseSet) {
	s := int32(0)
	w := a.width
	for i := 0; i < len(lower); i++ {
		s = a.next[int(s)*w+int(a.class[lower[i]])]
		if s >= 0 {
			continue
		}
		s = ^s
		lo, hi := a.outStart[s], a.outStart[s+1]
		for k := lo; k < hi; k++ {
			id := a.outIDs[k]
			p := &phraseBook.list[id]
			if p.lword {
				if st := i + 1 - len(p.s); st > 0 && isWordByte(lower[st-1]) {
					continue
				}
			}
			if p.rword && i+1 < len(lower) && isWordByte(lower[i+1]) {
				continue
			}
			hits.set(id)
		}
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 'A' && c <= 'Z'
}

// sequence matches parts in order, each a list of alternative phrases, with
// at most gap bytes between the end of one part and the start of the next:
// the "A … B" rules of the reference ("model … not found within 60
// characters"). Every part is also a phrase table, so a sequence whose parts
// are not all present costs a few bit tests and no search.
type sequence struct {
	gap   int
	parts []*table
	alts  [][]phrase
}

func newSeq(name string, gap int, parts ...[]string) *sequence {
	q := &sequence{gap: gap}
	for i, alts := range parts {
		q.parts = append(q.parts, newTable(fmt.Sprintf("%s.%d", name, i), alts...))
		ps := make([]phrase, len(alts))
		for j, a := range alts {
			ps[j] = parsePhrase(a)
		}
		q.alts = append(q.alts, ps)
	}
	return q
}

func parsePhrase(src string) phrase {
	p := phrase{s: src}
	if strings.HasPrefix(p.s, `\b`) {
		p.s, p.lword = p.s[2:], true
	}
	if strings.HasSuffix(p.s, `\b`) {
		p.s, p.rword = p.s[:len(p.s)-2], true
	}
	return p
}

// find returns the first (leftmost start) match in t.lower.
func (q *sequence) find(t *text) (string, bool) {
	for _, p := range q.parts {
		if !p.in(&t.hits) {
			return "", false
		}
	}
	s := t.lower
	best, bestEnd := -1, -1
	for _, a := range q.alts[0] {
		for i := 0; i < len(s); {
			k := strings.Index(s[i:], a.s)
			if k < 0 {
				break
			}
			k += i
			i = k + 1
			if best >= 0 && k >= best {
				break
			}
			if !a.boundaryOK(s, k) {
				continue
			}
			if end, ok := q.rest(s, k+len(a.s), 1); ok {
				best, bestEnd = k, end
				break
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return s[best:bestEnd], true
}

func (q *sequence) rest(s string, from, part int) (int, bool) {
	if part == len(q.alts) {
		return from, true
	}
	for _, a := range q.alts[part] {
		end := from + q.gap + len(a.s)
		if end > len(s) {
			end = len(s)
		}
		w := s[:end]
		for i := from; i < len(w); {
			k := strings.Index(w[i:], a.s)
			if k < 0 {
				break
			}
			k += i
			i = k + 1
			if !a.boundaryOK(s, k) {
				continue
			}
			if e, ok := q.rest(s, k+len(a.s), part+1); ok {
				return e, true
			}
		}
	}
	return 0, false
}

func (p *phrase) boundaryOK(s string, k int) bool {
	if p.lword && k > 0 && isWordByte(s[k-1]) {
		return false
	}
	if e := k + len(p.s); p.rword && e < len(s) && isWordByte(s[e]) {
		return false
	}
	return true
}

// keyed matches `<key>["']?\s*[:=]\s*["']?<value>`, the key at a word
// boundary and the value followed by a non-word byte: finish reasons and
// JSON/JS-inspect type or code fields ("reason: error", "type":
// 'server_error'), without a regex.
type keyed struct {
	keys, values *table
	keyList      []string
	valueList    []string
}

func newKeyed(name string, keys, values []string) *keyed {
	return &keyed{keys: newTable(name+".keys", keys...), values: newTable(name+".values", values...), keyList: keys, valueList: values}
}

func (kd *keyed) find(t *text) (string, bool) {
	if !kd.keys.in(&t.hits) || !kd.values.in(&t.hits) {
		return "", false
	}
	s := t.lower
	for _, key := range kd.keyList {
		for i := 0; i < len(s); {
			k := strings.Index(s[i:], key)
			if k < 0 {
				break
			}
			k += i
			i = k + 1
			if k > 0 && isWordByte(s[k-1]) {
				continue
			}
			j := k + len(key)
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				j++
			}
			j = skipBlank(s, j)
			if j >= len(s) || (s[j] != ':' && s[j] != '=') {
				continue
			}
			j = skipBlank(s, j+1)
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				j++
			}
			for _, v := range kd.valueList {
				if strings.HasPrefix(s[j:], v) {
					e := j + len(v)
					if e == len(s) || !isWordByte(s[e]) {
						return s[k:e], true
					}
				}
			}
		}
	}
	return "", false
}

func skipBlank(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// finder is anything a rule can search a text with: a phrase table, a
// gated regex, a sequence or a keyed matcher.
type finder interface {
	search(t *text) (string, bool)
}

func (tb *table) search(t *text) (string, bool)   { return tb.find(&t.hits) }
func (p *pattern) search(t *text) (string, bool)  { return p.find(t) }
func (q *sequence) search(t *text) (string, bool) { return q.find(t) }
func (kd *keyed) search(t *text) (string, bool)   { return kd.find(t) }

// unlessIn is a finder that does not match when a phrase of not is present.
type unlessIn struct {
	f   finder
	not *table
}

func (u unlessIn) search(t *text) (string, bool) {
	if u.not.in(&t.hits) {
		return "", false
	}
	return u.f.search(t)
}

func firstOf(t *text, fs ...finder) (string, bool) {
	for _, f := range fs {
		if m, ok := f.search(t); ok {
			return m, true
		}
	}
	return "", false
}

// and adds a required group to a pattern's gate: the regex runs only when
// a phrase of the gate and a phrase of every and-group are present.
func (p *pattern) and(phrases ...string) *pattern {
	p.need = append(p.need, newTable("and", phrases...))
	return p
}

// variants expands separator variants: variants("invalid", "api", "key")
// gives "invalid api key", "invalid_api_key", "invalid-api-key",
// "invalidapikey" (each part joined by the same separator).
func variants(words ...string) []string {
	var out []string
	for _, sep := range []string{" ", "_", "-", ""} {
		out = append(out, strings.Join(words, sep))
	}
	return out
}

// joined matches a compound word however it is joined ("ratelimit",
// "rate-limit"), optionally with a suffix ("ratelimited"), as a word of its
// own: the bytes on either side are neither word bytes nor hyphens, so
// header names such as "x-ratelimit-remaining" do not count.
type joined struct {
	gate     *table
	words    []string
	suffixes []string
}

func newJoined(name string, words []string, suffixes ...string) *joined {
	return &joined{gate: newTable(name+".gate", words...), words: words, suffixes: suffixes}
}

func (j *joined) search(t *text) (string, bool) {
	if !j.gate.in(&t.hits) {
		return "", false
	}
	s := t.lower
	outside := func(i int) bool { return i < 0 || i >= len(s) || !isWordByte(s[i]) && s[i] != '-' }
	for _, w := range j.words {
		for from, n := 0, 0; n < shapeMaxAnchors; n++ {
			k := strings.Index(s[from:], w)
			if k < 0 {
				break
			}
			i := from + k
			from = i + len(w)
			if !outside(i - 1) {
				continue
			}
			e := i + len(w)
			if outside(e) {
				return s[i:e], true
			}
			for _, suf := range j.suffixes {
				if strings.HasPrefix(s[e:], suf) && outside(e+len(suf)) {
					return s[i : e+len(suf)], true
				}
			}
		}
	}
	return "", false
}
