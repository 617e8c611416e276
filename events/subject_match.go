package events

import "strings"

// subjectMatches reports whether subject (no wildcards) matches filter as
// NATS matches them: token by token, "*" matching any one token and a
// final ">" one or more.
func subjectMatches(filter, subject string) bool {
	for {
		ft, frest, fmore := strings.Cut(filter, ".")
		st, srest, smore := strings.Cut(subject, ".")
		switch {
		case ft == ">" && !fmore:
			return true
		case ft != "*" && ft != st:
			return false
		case !fmore || !smore:
			return fmore == smore
		}
		filter, subject = frest, srest
	}
}

// hasWildcard reports whether filter holds a "*" or ">" token.
func hasWildcard(filter string) bool {
	for tok := range strings.SplitSeq(filter, ".") {
		if tok == "*" || tok == ">" {
			return true
		}
	}
	return false
}
