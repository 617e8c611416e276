package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
)

// storedEnum is the enum tag of payload field typ.field: the closed set the
// field's schema lists.
func storedEnum(t *testing.T, payload any, field string) []string {
	t.Helper()
	f, ok := reflect.TypeOf(payload).FieldByName(field)
	if !ok {
		t.Fatalf("%T has no field %s", payload, field)
	}
	e := f.Tag.Get("enum")
	if e == "" {
		t.Fatalf("%T.%s has no enum tag", payload, field)
	}
	return strings.Split(e, "|")
}

// declaredConsts returns the names of the package-level constants of the
// package's non-test files that start with prefix, or whose declared type
// is typ when typ is not "".
func declaredConsts(t *testing.T, prefix, typ string) []string {
	t.Helper()
	fset := token.NewFileSet()
	var names []string
	files, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range files {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					id, _ := vs.Type.(*ast.Ident)
					for _, n := range vs.Names {
						if (typ != "" && id != nil && id.Name == typ) || (typ == "" && strings.HasPrefix(n.Name, prefix)) {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

func sortedKeysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sortedValuesOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// TestVocabulary_EveryClosedSetIsTheStoredOne: each closed string set the
// decider declares is exactly the set its stored field takes (the payload
// enum tag the schemas are generated from, or the events vocabulary), and
// every constant of the set is in the table below, so a constant added to
// policy without a stored spelling, or a spelling added to a payload
// without a constant, fails here.
func TestVocabulary_EveryClosedSetIsTheStoredOne(t *testing.T) {
	cases := []struct {
		name   string
		prefix string // constants named so (typ == "")
		typ    string // or constants of this declared type
		consts map[string]string
		stored []string // nil: an in-memory set with no stored form
	}{
		{"reasons", "Reason", "", map[string]string{
			"ReasonAuth": ReasonAuth, "ReasonAuthPermanent": ReasonAuthPermanent, "ReasonFormat": ReasonFormat,
			"ReasonRateLimit": ReasonRateLimit, "ReasonOverloaded": ReasonOverloaded, "ReasonBilling": ReasonBilling,
			"ReasonServerError": ReasonServerError, "ReasonTimeout": ReasonTimeout, "ReasonTLSCertificate": ReasonTLSCertificate,
			"ReasonContextOverflow": ReasonContextOverflow, "ReasonModelNotFound": ReasonModelNotFound,
			"ReasonSessionExpired": ReasonSessionExpired, "ReasonEmptyResponse": ReasonEmptyResponse,
			"ReasonNoErrorDetails": ReasonNoErrorDetails, "ReasonUnclassified": ReasonUnclassified, "ReasonUnknown": ReasonUnknown,
		}, events.Spellings(events.Reasons)},
		{"dispositions", "Disposition", "", map[string]string{
			"DispositionFailover": DispositionFailover, "DispositionCompaction": DispositionCompaction,
			"DispositionAbort": DispositionAbort, "DispositionRefusal": DispositionRefusal,
			"DispositionCoordination": DispositionCoordination,
		}, events.Spellings(events.Dispositions)},
		{"attempt kinds", "", "AttemptKind", map[string]string{
			"KindFirst": string(KindFirst), "KindRetry": string(KindRetry), "KindRotation": string(KindRotation),
			"KindFallback": string(KindFallback), "KindProbe": string(KindProbe), "KindChainRetry": string(KindChainRetry),
			"KindLiveSwitch": string(KindLiveSwitch), "KindTransportRecovery": string(KindTransportRecovery),
		}, storedEnum(t, events.AttemptStarted{}, "Kind")},
		{"next kinds", "", "NextKind", map[string]string{
			"NextCall": string(NextCall), "NextWait": string(NextWait), "NextDone": string(NextDone),
			"NextExhausted": string(NextExhausted), "NextStop": string(NextStop),
			"NextSwitch": string(NextSwitch),
		}, nil},
		{"notice kinds", "", "NoticeKind", map[string]string{
			"NoticeFallback": string(NoticeFallback), "NoticeFallbackCleared": string(NoticeFallbackCleared),
			"NoticeOverloadWait": string(NoticeOverloadWait),
		}, storedEnum(t, events.NoticeSent{}, "Kind")},
		{"selection sources", "", "SelectionSource", map[string]string{
			"SourceDefault": string(SourceDefault), "SourceAgent": string(SourceAgent), "SourceUser": string(SourceUser),
			"SourceLegacy": string(SourceLegacy), "SourceAuto": string(SourceAuto), "SourceCron": string(SourceCron),
		}, storedEnum(t, events.TurnStarted{}, "SelectionSource")},
		{"pin sources", "", "PinSource", map[string]string{
			"PinAuto": string(PinAuto), "PinUser": string(PinUser),
		}, storedEnum(t, events.SessionAuthPinned{}, "Source")},
		{"turn phases", "", "TurnPhase", map[string]string{
			"PhaseRunning": string(PhaseRunning), "PhaseWaiting": string(PhaseWaiting), "PhaseSucceeded": string(PhaseSucceeded),
			"PhaseExhausted": string(PhaseExhausted), "PhaseStopped": string(PhaseStopped),
			"PhaseSwitched": string(PhaseSwitched),
		}, nil},
		{"pending waits", "", "PendingWait", map[string]string{
			"PendingRetry": string(PendingRetry), "PendingChain": string(PendingChain),
		}, nil},
		{"unpin causes", "Unpin", "", map[string]string{
			"UnpinReset": UnpinReset, "UnpinCompaction": UnpinCompaction, "UnpinCooldown": UnpinCooldown,
			"UnpinProviderMismatch": UnpinProviderMismatch, "UnpinProfileRemoved": UnpinProfileRemoved,
			"UnpinReplaced": UnpinReplaced, "UnpinDefaultCommand": UnpinDefaultCommand,
		}, storedEnum(t, events.SessionAuthUnpinned{}, "Cause")},
		{"fallback decisions", "Decision", "", map[string]string{
			"DecisionCandidateFailed": DecisionCandidateFailed, "DecisionSkipCandidate": DecisionSkipCandidate,
			"DecisionProbeCandidate": DecisionProbeCandidate, "DecisionCandidateSucceeded": DecisionCandidateSucceeded,
			"DecisionLiveSwitch": DecisionLiveSwitch,
		}, storedEnum(t, events.FallbackStepped{}, "Decision")},
		{"route origins", "Origin", "", map[string]string{
			"OriginRequested": OriginRequested, "OriginConfiguredFallback": OriginConfiguredFallback,
			"OriginConfiguredPrimary": OriginConfiguredPrimary,
		}, storedEnum(t, events.Candidate{}, "RouteOrigin")},
		{"blocked reasons", "Blocked", "", map[string]string{
			"BlockedSubscriptionLimit": BlockedSubscriptionLimit,
		}, storedEnum(t, events.ProfileFailureRecorded{}, "BlockedReason")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := declaredConsts(t, tc.prefix, tc.typ), sortedKeysOf(tc.consts); !slices.Equal(got, want) {
				t.Errorf("declared constants %v, the table names %v: add the new constant here (and to its stored enum)", got, want)
			}
			if tc.stored == nil {
				return
			}
			stored := slices.Clone(tc.stored)
			slices.Sort(stored)
			if got := sortedValuesOf(tc.consts); !slices.Equal(got, stored) {
				t.Errorf("constant values %v, stored set %v", got, stored)
			}
		})
	}
}

// TestVocabulary_DecisionsListIsTheStoredEnum: Decisions (what the
// decisions filter accepts) is the record's enum, in its order.
func TestVocabulary_DecisionsListIsTheStoredEnum(t *testing.T) {
	if want := storedEnum(t, events.FallbackStepped{}, "Decision"); !slices.Equal(Decisions, want) {
		t.Fatalf("Decisions %q, want the stored enum %q", Decisions, want)
	}
}
