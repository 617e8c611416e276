package replay_test

import (
	"context"
	"iter"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// dropSource reads src with the commit at sequence drop missing, as the
// store reports a damaged block: a gap (*events.DecodeError wrapping
// events.ErrGap) in its place.
type dropSource struct {
	src  replay.Source
	drop uint64
}

func (d dropSource) Read(ctx context.Context, from uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		for ev, err := range d.src.Read(ctx, from) {
			if err == nil && ev.Seq == d.drop {
				if ev.Index == 0 && !yield(events.Event{Seq: ev.Seq, Index: -1}, &events.DecodeError{Seq: ev.Seq, Through: ev.Seq, Index: -1, Err: events.ErrGap}) {
					return
				}
				continue
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Verify: a stored message that is not a fledger commit is a finding (its
// own line, no divergence, OK still true, StrictOK false); a missing
// sequence is named and makes the report not OK.
func TestVerify_StrayMessageIsAFinding_GapIsNamed(t *testing.T) {
	st := openStore(t, events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	names := scenarioNames(t)
	runScenario(t, st, names[0], "v-a")
	js, err := jetstream.New(natstest.DialWriter(t, st))
	testutil.NoError(t, err)
	ack, err := js.Publish(context.Background(), "fledger.main.turn.oops", []byte(`{"x":1}`))
	testutil.NoError(t, err)
	runScenario(t, st, names[0], "v-b")

	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() || rep.StrictOK() || rep.Diverged != 0 || len(rep.Quarantined) != 1 || len(rep.Missing) != 0 {
		t.Fatalf("stray message: ok %v strict %v diverged %d quarantined %+v missing %+v", rep.OK(), rep.StrictOK(), rep.Diverged, rep.Quarantined, rep.Missing)
	}
	want := "seq " + strconv.FormatUint(ack.Sequence, 10) + " (subject fledger.main.turn.oops, 7 bytes): not a fledger commit: events: want a JSON array of one or more event envelopes, found no events field"
	if got := rep.Quarantined[0].String(); got != want {
		t.Fatalf("finding %q, want %q", got, want)
	}

	rep, err = replay.Verify(context.Background(), dropSource{src: st, drop: ack.Sequence + 3}, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if rep.OK() || len(rep.Missing) != 1 || rep.Missing[0].Seq != ack.Sequence+3 {
		t.Fatalf("gap: ok %v missing %+v", rep.OK(), rep.Missing)
	}
	if got := rep.Missing[0].String(); got != "sequence "+strconv.FormatUint(ack.Sequence+3, 10)+" missing from the stream" {
		t.Fatalf("gap finding %q", got)
	}
	if !strings.Contains(rep.Missing[0].Reason, "missing") {
		t.Fatalf("gap reason %q", rep.Missing[0].Reason)
	}
}
