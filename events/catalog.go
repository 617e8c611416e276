package events

// Catalog returns one zero value of every payload type fledger writes, in
// catalog order (docs/events.md). Each is registered at version 1 unless an
// upcaster says otherwise.
func Catalog() []Payload {
	return []Payload{
		ConfigApplied{},
		ProfileFailureRecorded{}, ProfileSucceeded{}, ProfileCleared{},
		SessionModelSelected{}, SessionModelCleared{}, SessionAuthPinned{},
		SessionAuthUnpinned{}, SessionReset{}, FallbackNoticeStateChanged{},
		CompactionCompleted{},
		TurnStarted{}, AttemptStarted{}, AttemptFailed{}, AttemptSucceeded{},
		RetryScheduled{}, CandidateSkipped{}, FallbackStepped{},
		ChainRetryScheduled{}, NoticeSent{}, TurnSucceeded{}, TurnExhausted{},
		TurnStopped{},
	}
}
