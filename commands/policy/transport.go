package policy

// Bounded same-model transport recovery (seed 000, first paragraph; POLICY
// "Order, pins, chain, selection source"; rule revision 3): "When a
// transient network failure interrupts a provider call before any
// assistant content or tool call is produced … After a settled tool batch,
// this lets the runner continue from the current transcript up to twice
// without rerunning those tools. Partial responses and unfinished tool
// batches do not qualify for this recovery."

// TransportRecoveryMax is how many transport_recovery attempts a turn may
// make ("up to twice").
const TransportRecoveryMax = 2

// TransportFailure reports whether out is a transient network failure: a
// timeout-shaped failure (connection reset or refused, premature close,
// DNS, socket timeout: classify.FromError) that carries no HTTP status
// from the provider, so the provider never answered.
func TransportFailure(out Outcome) bool {
	return !out.OK && out.Reason == ReasonTimeout && out.Error.Status == 0
}

// transportRecovery reports whether the failed attempt is continued on the
// same call as a transport_recovery: from revision 3, a transport failure
// the gateway reported after a settled tool batch, before any output or
// tool call (a partial response or an unfinished tool batch never
// qualifies), while the turn has made fewer than TransportRecoveryMax of
// them. The recovery is not a failure of the profile: nothing is counted
// against its health, and no back-off is waited.
func (d *decider) transportRecovery(out Outcome) bool {
	return d.v3() && out.ToolBatchSettled && !out.OutputStarted && !out.ToolStarted &&
		TransportFailure(out) && d.st.TransportRecoveries < TransportRecoveryMax
}
