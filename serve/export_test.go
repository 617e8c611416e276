package serve

import (
	"time"

	"github.com/fledger/fledger/engine"
)

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

// HoldWhatIf takes every what-if slot of s until release is called (a
// what-if running, for the tests), and makes another what-if wait only
// briefly for a slot meanwhile.
func HoldWhatIf(s *Service) (release func()) {
	old := s.whatIfWait
	s.whatIfWait = 50 * time.Millisecond
	for range cap(s.whatIfs) {
		s.whatIfs <- struct{}{}
	}
	return func() {
		s.whatIfWait = old
		for range cap(s.whatIfs) {
			<-s.whatIfs
		}
	}
}
