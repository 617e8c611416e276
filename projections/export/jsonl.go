package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fledger/fledger/internal/filelock"
)

// JSONL is a [Sink] writing one record per line as JSON (JSON Lines), each
// batch flushed (and fsynced, for a file) before Export returns. It drops
// any record at or before the last one it wrote, so a batch offered again
// after a failed acknowledgement is not written twice; a file opened with
// [OpenJSONLFile] also starts from the file's last complete line, which
// makes a restarted export exactly-once for that file. Not safe for
// concurrent use.
type JSONL struct {
	w    *bufio.Writer
	f    *os.File
	path string // the file's, "" for another writer
	last cursor
	buf  bytes.Buffer
}

// NewJSONL returns a JSONL sink writing to w (e.g. stdout). It knows
// nothing about earlier output, so across a crash between a write and its
// acknowledgement a record may be written again (at least once).
func NewJSONL(w io.Writer) *JSONL {
	return &JSONL{w: bufio.NewWriterSize(w, 64<<10)}
}

// OpenJSONLFile opens (or creates) path for appending as a JSONL sink.
// When the file already holds records, a trailing partial line (a crash in
// the middle of a write) is cut off and the sink resumes after the last
// complete line: records whose (seq, place in commit) are at or before it
// are dropped. The sink holds an exclusive advisory lock (flock) on the
// file until Close: a second one opened on it, in this process or
// another, is refused with an error wrapping [filelock.ErrLocked] that
// names the file and the holder's pid (when the system tells it). Other
// errors: the file cannot be opened, read or truncated, or its last line
// is not a record with a `seq` field.
func OpenJSONLFile(path string) (*JSONL, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if pid, err := filelock.Lock(f); err != nil {
		f.Close()
		holder := ""
		if pid > 0 {
			holder = fmt.Sprintf(" (pid %d)", pid)
		}
		return nil, fmt.Errorf("export: %s is being written by another exporter%s: %w; a file has one writer, so stop that one or write another file", path, holder, err)
	}
	cur, end, err := resumeCursor(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("export: resume %s: %w", path, err)
	}
	if err := f.Truncate(end); err != nil {
		f.Close()
		return nil, fmt.Errorf("export: %w", err)
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("export: %w", err)
	}
	return &JSONL{w: bufio.NewWriterSize(f, 64<<10), f: f, path: path, last: cur}, nil
}

// Resume returns the position the sink resumes after: the stream sequence
// of the last record written and how many records of that commit were
// written (0, 0 for new output).
func (j *JSONL) Resume() (seq uint64, n int) { return j.last.seq, j.last.n }

// Holds implements [Holder]: a file knows the records it holds (ok);
// another writer does not.
func (j *JSONL) Holds() (Position, bool) {
	return Position{Seq: j.last.seq, N: j.last.n, Last: j.last.id}, j.f != nil
}

// Export implements [Sink]: it writes the records not yet written, then
// flushes, and for a file fsyncs.
func (j *JSONL) Export(_ context.Context, recs []Record) error {
	for i := range recs {
		r := &recs[i]
		if j.last.delivered(r) {
			continue
		}
		j.buf.Reset()
		enc := json.NewEncoder(&j.buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("export: encode record seq %d: %w", r.Seq, err)
		}
		if _, err := j.w.Write(j.buf.Bytes()); err != nil {
			return fmt.Errorf("export: write: %w", err)
		}
		j.last.advance(r)
	}
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("export: flush: %w", err)
	}
	if j.f != nil {
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("export: sync: %w", err)
		}
	}
	return nil
}

// Close flushes and, for a file, closes it.
func (j *JSONL) Close() error {
	err := j.w.Flush()
	if j.f != nil {
		err = errors.Join(err, j.f.Close())
	}
	return err
}

// resumeCursor reads f's tail: end is the length of its complete lines (a
// partial last line is to be cut off) and the cursor names the last
// complete line's seq and how many lines in a row at the end carry it.
func resumeCursor(f *os.File) (cursor, int64, error) {
	st, err := f.Stat()
	if err != nil {
		return cursor{}, 0, err
	}
	size := st.Size()
	for win := int64(64 << 10); ; win *= 2 {
		start := max(size-win, 0)
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return cursor{}, 0, err
		}
		nl := bytes.LastIndexByte(buf, '\n')
		if nl < 0 {
			if start == 0 {
				return cursor{}, 0, nil // no complete line
			}
			continue
		}
		end := start + int64(nl) + 1
		lines := bytes.Split(buf[:nl], []byte("\n"))
		if start > 0 {
			lines = lines[1:] // the first may be cut by the window
		}
		var cur cursor
		complete := false
		for i := len(lines) - 1; i >= 0; i-- {
			if len(bytes.TrimSpace(lines[i])) == 0 {
				continue
			}
			var head struct {
				Seq    *uint64         `json:"seq"`
				Time   json.RawMessage `json:"time"`
				Agent  string          `json:"agent"`
				TurnID string          `json:"turnId"`
			}
			if err := json.Unmarshal(lines[i], &head); err != nil || head.Seq == nil {
				return cursor{}, 0, fmt.Errorf("line is not a decision record: %.80q", lines[i])
			}
			if cur.n == 0 {
				cur.seq = *head.Seq
				cur.id = RecordID{Agent: head.Agent, TurnID: head.TurnID}
				_ = cur.id.Time.UnmarshalJSON(head.Time) // a time it cannot read stays 0: not compared
			} else if *head.Seq != cur.seq {
				complete = true
				break
			}
			cur.n++
		}
		if complete || start == 0 {
			return cur, end, nil
		}
	}
}
