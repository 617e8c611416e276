package serve

import "strings"

// bearerToken reads "Authorization: Bearer <token>". The scheme is
// case-insensitive (RFC 7235 §2.1: "bearer", "BEARER" are the same
// scheme) and may be followed by more than one space.
func bearerToken(h string) (string, bool) {
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok := strings.TrimLeft(rest, " ")
	return tok, tok != ""
}
