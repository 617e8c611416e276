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
		AuthOrderSet{},
		// Appended after the first release: the catalog only grows at the end.
		ProfileUsed{},
		LiveSwitchMarked{}, TurnSwitched{},
		SessionPruned{},
	}
}

// Keyed is a payload that names its own aggregate key. Every type of
// [Catalog] is one: the key field is declared once, beside EventType and
// EventAggregate, by its EventKey method (TestCatalog_EveryTypeNamesItsKey).
// It is not part of [Payload] so that a payload defined outside the
// catalog (a test's, say) need not have one.
type Keyed interface {
	// EventKey returns the aggregate key the payload names.
	EventKey() string
}

// KeyOf returns the aggregate key a payload names (its [Keyed] EventKey):
// the turn id of a turn event, the profile id of a profile event, the
// session key of a session event, the hash of a ConfigApplied, the
// provider of an AuthOrderSet; "" for a payload that names none. It is
// the key to pass to [New] and the key state is folded under.
func KeyOf(p Payload) string {
	if k, ok := p.(Keyed); ok {
		return k.EventKey()
	}
	return ""
}
