package events

// Disposition is what the failover loop may do after a classified failure
// (POLICY "Reasons, status, disposition"). AttemptFailed.Disposition and
// TurnStopped.Disposition hold one of [Dispositions].
type Disposition string

// The five dispositions.
const (
	// DispositionFailover: the loop may rotate profiles or advance to the
	// next candidate.
	DispositionFailover Disposition = "failover"
	// DispositionCompaction: context overflow; stop the chain and hand back
	// to compaction/retry. A request-size ceiling is failover instead.
	DispositionCompaction Disposition = "compaction"
	// DispositionAbort: an explicit cancellation that is not timeout-shaped;
	// stop and touch no health state.
	DispositionAbort Disposition = "abort"
	// DispositionRefusal: a final provider refusal (content filter, safety
	// block); stop the turn.
	DispositionRefusal Disposition = "refusal"
	// DispositionCoordination: a local lock, takeover or draining error; stop,
	// never a provider fault.
	DispositionCoordination Disposition = "coordination"
)

// Dispositions is the disposition set in the order above. Callers must not
// modify it.
var Dispositions = []Disposition{
	DispositionFailover, DispositionCompaction, DispositionAbort,
	DispositionRefusal, DispositionCoordination,
}

// ParseDisposition returns the Disposition spelled s, or an error naming s.
func ParseDisposition(s string) (Disposition, error) {
	return parseIn("disposition", Dispositions, s)
}
