package replay

import (
	"context"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// SeqAt returns the stream position as of moment t: the sequence of the
// last commit before the first commit stamped after t (0 when the first
// commit is already after t). On a live stream time order is append
// order; where clocks disagree (several engines, scenarios on virtual
// time), the prefix stops at the first later commit, so the state is
// always a real prefix of the stream.
func SeqAt(ctx context.Context, src Source, t time.Time) (uint64, error) {
	m, err := MomentAt(ctx, src, t)
	return m.Seq, err
}

// FirstSeq returns the sequence of the stream's first stored message (a
// commit, or a message that is not one), 0 when the stream is empty. It
// is 1 unless the stream continues an archived one
// ([events.WithFirstSeq]).
func FirstSeq(ctx context.Context, src Source) (uint64, error) {
	var seq uint64
	err := walk(ctx, src, 1, 0, func(c *commit) error {
		seq = c.Seq
		return errStop
	})
	return seq, err
}

// RebuildOptions tune [Rebuild].
type RebuildOptions struct {
	// ToSeq is the last stream sequence to fold (0 = the stream's end).
	ToSeq uint64
	// Projector options (batch size, progress, skip-unknown, logger).
	Projector []projections.ProjectorOption
}

// RebuildResult is what a rebuild folded.
type RebuildResult struct {
	projections.Result
	// ToSeq is the sequence the rebuild was asked to reach (the stream's
	// last sequence when RebuildOptions.ToSeq was 0).
	ToSeq uint64
	// Path is the database written.
	Path string
}

// Rebuild folds the stream from sequence 1 up to opt.ToSeq into a fresh
// projection database at path (an existing projection database is
// replaced; anything else is refused: [projections.Remove]) and returns
// what it folded. The database is closed when Rebuild returns.
func Rebuild(ctx context.Context, st events.Store, path string, opt RebuildOptions) (RebuildResult, error) {
	res := RebuildResult{Path: path, ToSeq: opt.ToSeq}
	if res.ToSeq == 0 {
		last, err := st.LastSeq(ctx, "")
		if err != nil {
			return res, err
		}
		res.ToSeq = last
	}
	if _, err := projections.Remove(ctx, path); err != nil {
		return res, err
	}
	db, err := projections.Open(ctx, path)
	if err != nil {
		return res, err
	}
	defer db.Close()
	if res.ToSeq == 0 {
		return res, nil
	}
	r, err := projections.NewProjector(db, opt.Projector...).CatchUp(ctx, st, res.ToSeq)
	res.Result = r
	return res, err
}
