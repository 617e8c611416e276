package serve

import (
	"context"
	"encoding/json"
	"net/http"
)

// decisionsQuery is decisions.list's request: GET /v1/decisions's, with
// from_seq and limit kept as the JSON number's text, read by the rules of
// the route's query (parseFromSeq, parseLimit): {"limit":0} is refused as
// ?limit=0 is, {"from_seq":-1} as ?from_seq=-1.
type decisionsQuery struct {
	DecisionsRequest
	FromSeq json.RawMessage `json:"from_seq,omitempty"`
	Limit   json.RawMessage `json:"limit,omitempty"`
}

// decisionsOverMicro is decisions.list: [Service.Decisions] of q read as
// GET /v1/decisions reads its query.
func (s *Service) decisionsOverMicro(ctx context.Context, q *decisionsQuery) (*DecisionsView, error) {
	r := q.DecisionsRequest
	var err error
	if r.FromSeq, err = jsonNumber("from_seq", q.FromSeq, parseFromSeq); err != nil {
		return nil, err
	}
	if r.Limit, err = jsonNumber("limit", q.Limit, parseLimit); err != nil {
		return nil, err
	}
	return s.Decisions(ctx, &r)
}

// jsonNumber reads field's raw JSON value with parse, the query's rule,
// given the number's text: absent or null is T's zero value (not given),
// a value that is not a number is 400 invalid_json naming its kind.
func jsonNumber[T any](field string, raw json.RawMessage, parse func(string) (T, error)) (T, error) {
	var zero T
	switch k := kindOf(raw); k {
	case "nothing", "null":
		return zero, nil
	case "number":
		return parse(string(raw))
	default:
		return zero, apiErr(http.StatusBadRequest, CodeInvalidJSON, "%s: expected an integer, got %s", field, k)
	}
}
