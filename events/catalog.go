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
	}
}

// KeyOf returns the aggregate key a payload names: the turn id of a turn
// event, the profile id of a profile event, the session key of a session
// event, the hash of a ConfigApplied, the provider of an AuthOrderSet; "" for a payload it does not know.
// It is the key to pass to [New] and the key state is folded under.
func KeyOf(p Payload) string {
	switch e := p.(type) {
	case ConfigApplied:
		return e.Hash
	case ProfileFailureRecorded:
		return e.ProfileID
	case ProfileSucceeded:
		return e.ProfileID
	case ProfileCleared:
		return e.ProfileID
	case ProfileUsed:
		return e.ProfileID
	case SessionModelSelected:
		return e.Session
	case SessionModelCleared:
		return e.Session
	case SessionAuthPinned:
		return e.Session
	case SessionAuthUnpinned:
		return e.Session
	case SessionReset:
		return e.Session
	case FallbackNoticeStateChanged:
		return e.Session
	case CompactionCompleted:
		return e.Session
	case TurnStarted:
		return e.TurnID
	case AttemptStarted:
		return e.TurnID
	case AttemptFailed:
		return e.TurnID
	case AttemptSucceeded:
		return e.TurnID
	case RetryScheduled:
		return e.TurnID
	case CandidateSkipped:
		return e.TurnID
	case FallbackStepped:
		return e.TurnID
	case ChainRetryScheduled:
		return e.TurnID
	case NoticeSent:
		return e.TurnID
	case TurnSucceeded:
		return e.TurnID
	case TurnExhausted:
		return e.TurnID
	case TurnStopped:
		return e.TurnID
	case AuthOrderSet:
		return e.Provider
	}
	return ""
}
