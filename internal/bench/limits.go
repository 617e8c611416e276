package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/sqlitedb"
)

// The raw limits use nats.go's jetstream package directly
// (events.RawBench, events.RawReader) on a stream of their own
// (events.RawBenchStream, subjects bench.>) of the same embedded server
// that holds fledger's stream, and modernc SQLite with fledger's settings
// (internal/sqlitedb: WAL, synchronous=NORMAL, one connection).

// rawJS returns a raw JetStream publisher on st's server (async publish
// window 4096, stall wait 1 min so sync-always acks never time it out) and
// a fresh BENCH stream on that server.
func rawJS(ctx context.Context, st events.Store) (*events.RawBench, error) {
	return events.NewRawBench(ctx, st, 4096, true)
}

// publishSync publishes n messages (bodies reused in a cycle, subjects over
// 1000 keys), each waiting for its ack; it returns msgs/s and the per-publish
// latencies.
func publishSync(ctx context.Context, js *events.RawBench, bodies [][]byte, n int) (float64, []time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	start := time.Now()
	for i := range n {
		t := time.Now()
		if err := js.Publish(ctx, "bench.sync."+strconv.Itoa(i%1000), bodies[i%len(bodies)]); err != nil {
			return 0, nil, fmt.Errorf("sync publish %d: %w", i, err)
		}
		lat = append(lat, time.Since(t))
	}
	return rate(n, time.Since(start)), lat, nil
}

// publishAsync publishes n messages without waiting per message (at most
// 4096 in flight) and waits for every ack; it returns msgs/s.
func publishAsync(ctx context.Context, js *events.RawBench, bodies [][]byte, n int) (float64, error) {
	start := time.Now()
	for i := range n {
		if err := js.PublishAsync("bench.async."+strconv.Itoa(i%1000), bodies[i%len(bodies)]); err != nil {
			return 0, fmt.Errorf("async publish %d: %w", i, err)
		}
	}
	select {
	case <-js.AsyncComplete():
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return rate(n, time.Since(start)), nil
}

// fsyncLatencies writes n 512-byte records to a file in dir, each
// followed by fsync, and returns each write+fsync's duration: the disk's
// own floor under a durable append.
func fsyncLatencies(dir string, n int) ([]time.Duration, error) {
	f, err := os.Create(filepath.Join(dir, "fsync.bin"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 512)
	lat := make([]time.Duration, 0, n)
	for i := range n {
		t := time.Now()
		if _, err := f.WriteAt(buf, int64(i)*512); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t))
	}
	return lat, nil
}

// rawTable opens a fresh SQLite database with a 15-column table (the width
// of usage_stats) keyed by (agent, key), and a one-row checkpoint table.
func rawTable(ctx context.Context, path string) (*sql.DB, error) {
	db, err := sqlitedb.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	_, err = db.ExecContext(ctx, `CREATE TABLE t (a TEXT NOT NULL, k TEXT NOT NULL, c1 TEXT, c2 INTEGER, c3 INTEGER,
		c4 INTEGER, c5 INTEGER, c6 TEXT, c7 INTEGER, c8 TEXT, c9 TEXT, c10 INTEGER, c11 TEXT, c12 INTEGER, c13 INTEGER,
		PRIMARY KEY (a, k)) WITHOUT ROWID;
		CREATE TABLE cp (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
		INSERT INTO cp VALUES (1, 0)`)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

const rawUpsertSQL = `INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (a, k) DO UPDATE SET c1 = excluded.c1, c2 = excluded.c2, c3 = excluded.c3, c4 = excluded.c4,
	c5 = excluded.c5, c6 = excluded.c6, c7 = excluded.c7, c8 = excluded.c8, c9 = excluded.c9,
	c10 = excluded.c10, c11 = excluded.c11, c12 = excluded.c12, c13 = excluded.c13`

// batchWriter writes upserts 1000 rows per transaction with a prepared
// statement, plus a checkpoint update per transaction.
type batchWriter struct {
	ctx     context.Context
	db      *sql.DB
	up, cp  *sql.Stmt
	tx      *sql.Tx
	ts      *sql.Stmt
	inTx, n int
}

func newBatchWriter(ctx context.Context, db *sql.DB) (*batchWriter, error) {
	up, err := db.PrepareContext(ctx, rawUpsertSQL)
	if err != nil {
		return nil, err
	}
	cp, err := db.PrepareContext(ctx, `UPDATE cp SET seq = ? WHERE id = 1`)
	if err != nil {
		return nil, err
	}
	return &batchWriter{ctx: ctx, db: db, up: up, cp: cp}, nil
}

func (w *batchWriter) row(seq uint64, args ...any) error {
	if w.tx == nil {
		tx, err := w.db.BeginTx(w.ctx, nil)
		if err != nil {
			return err
		}
		w.tx, w.ts = tx, tx.StmtContext(w.ctx, w.up)
	}
	if _, err := w.ts.ExecContext(w.ctx, args...); err != nil {
		return err
	}
	w.n++
	if w.inTx++; w.inTx == 1000 {
		return w.flush(seq)
	}
	return nil
}

func (w *batchWriter) flush(seq uint64) error {
	if w.tx == nil {
		return nil
	}
	if _, err := w.tx.StmtContext(w.ctx, w.cp).ExecContext(w.ctx, int64(seq)); err != nil {
		return err
	}
	err := w.tx.Commit()
	w.tx, w.ts, w.inTx = nil, nil, 0
	return err
}

func (w *batchWriter) close() {
	if w.tx != nil {
		_ = w.tx.Rollback()
	}
	_ = w.up.Close()
	_ = w.cp.Close()
}

// rawUpsert writes n rows over 1000 keys, 1000 rows per transaction, and
// returns rows/s.
func rawUpsert(ctx context.Context, path string, n int) (float64, error) {
	db, err := rawTable(ctx, path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	w, err := newBatchWriter(ctx, db)
	if err != nil {
		return 0, err
	}
	defer w.close()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("anthropic:profile-%04d", i)
	}
	const t0 = int64(1_772_442_000_000)
	start := time.Now()
	for i := range n {
		if err := w.row(uint64(i), "main", keys[i%1000], "anthropic", t0+int64(i), t0, i%7, t0+int64(i),
			`{"rate_limit":2}`, t0+30_000, "rate_limit", "claude-opus-4-6", 0, "", t0+int64(i), i); err != nil {
			return 0, err
		}
	}
	if err := w.flush(uint64(n)); err != nil {
		return 0, err
	}
	return rate(n, time.Since(start)), nil
}

// rawRead reads the first last messages of fledger's stream with an
// ordered consumer, bytes only, and returns messages/s, bytes read.
func rawRead(ctx context.Context, st events.Store, last uint64) (float64, int64, error) {
	start := time.Now()
	it, err := events.NewRawReader(ctx, st)
	if err != nil {
		return 0, 0, err
	}
	defer it.Stop()
	var bytes int64
	for n := uint64(0); n < last; n++ {
		data, err := it.Next()
		if err != nil {
			return 0, 0, err
		}
		bytes += int64(len(data))
	}
	return rate(int(last), time.Since(start)), bytes, nil
}

// publishFill publishes generated commits asynchronously to fledger's
// stream with the store's headers (message id, expected stream): the fast
// way to write a large realistic stream. wait flushes the acks.
type publishFill struct {
	js   *events.RawBench
	msgs int
}

func newPublishFill(st events.Store) (*publishFill, error) {
	js, err := events.NewRawBench(context.Background(), st, 4096, false)
	return &publishFill{js: js}, err
}

func (p *publishFill) emit(subject, id string, body []byte) error {
	if err := p.js.PublishCommitAsync(subject, id, body); err != nil {
		return err
	}
	p.msgs++
	return nil
}

func (p *publishFill) wait(ctx context.Context) error {
	select {
	case <-p.js.AsyncComplete():
	case <-ctx.Done():
		return ctx.Err()
	}
	if n := p.js.AsyncPending(); n != 0 {
		return fmt.Errorf("%d async publishes still pending", n)
	}
	if n, first := p.js.Failed(); n > 0 {
		return fmt.Errorf("%d async publishes failed, first: %v", n, first)
	}
	return nil
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
