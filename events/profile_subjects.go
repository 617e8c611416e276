package events

// SubjectProfileReset is the subject token under which a profile's
// resetting successes are stored: fledger.<agent>.profile_reset.<profile>.
// It names no aggregate of its own (the events inside belong to the
// profile and the turn, and are folded by their envelopes); it keeps a
// profile's resets apart from its failures so that guards can tell them
// apart ([ProfileGuards]).
const SubjectProfileReset Aggregate = "profile_reset"

// subjectTokens are the third tokens fledger writes under; a profile's
// any-subject guard (fledger.<agent>.*.<profile>) matches each of them.
var subjectTokens = []Aggregate{AggConfig, AggProfile, SubjectProfileReset, AggSession, AggTurn, AggOrder}

// ProfileGuards are the subjects and guard of one auth profile's health:
//
//   - Failures (fledger.<agent>.profile.<P>) stores the decisions that
//     count a failure or clear the profile; they are guarded by AnyOf.
//   - Resets (fledger.<agent>.profile_reset.<P>) stores successes that
//     clear failure state (ProfileSucceeded); they are guarded by Failures
//     only, so two resets never conflict (they clear the same state the
//     same way) while a failure stored since a reset's read makes it
//     decide again.
//   - AnyOf (fledger.<agent>.*.<P>) matches both, so a failure conflicts
//     with every failure and every reset stored since its read: failures
//     are counted exactly, on the counters as the last reset left them.
//
// Successes that clear nothing (ProfileUsed) commute with all of these and
// are stored with their turn.
type ProfileGuards struct {
	Failures, Resets, AnyOf string
	// Subjects are the exact subjects AnyOf matches that fledger writes
	// (one per token): the guard's last sequence is the highest of theirs.
	Subjects []string
}

// ProfileGuardsOf returns profile's subjects and guard for agent.
func ProfileGuardsOf(agent, profile string) (ProfileGuards, error) {
	g := ProfileGuards{}
	for _, tok := range subjectTokens {
		s, err := Subject(agent, tok, profile)
		if err != nil {
			return ProfileGuards{}, err
		}
		g.Subjects = append(g.Subjects, s)
		switch tok {
		case AggProfile:
			g.Failures = s
		case SubjectProfileReset:
			g.Resets = s
		}
	}
	g.AnyOf = SubjectPrefix + "." + EncodeToken(agent) + ".*." + EncodeToken(profile)
	return g, nil
}
