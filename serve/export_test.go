package serve

import "github.com/fledger/fledger/engine"

// ErrorAnswer is a status and error code the server answers.
type ErrorAnswer struct {
	Status int
	Code   string
}

// ErrorTableAnswers are the answers of every row of errorTable, for the
// external tests (each must be seen validated against the OpenAPI
// document).
func ErrorTableAnswers() []ErrorAnswer {
	out := make([]ErrorAnswer, 0, len(errorTable))
	for _, c := range errorTable {
		out = append(out, ErrorAnswer{c.Status, c.Code})
	}
	return out
}

// EngineOf is the service's engine of agent.
func EngineOf(s *Service, agent string) *engine.Engine { return s.engines[agent] }
