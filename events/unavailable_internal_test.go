package events

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// What each failure of a send means for the retry: an answer, nothing
// received (retry), or sent and not answered (retry; outcome unknown).
func TestClassifySend(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want sendKind
	}{
		{"stored", nil, sendFinal},
		{"a conflict is an answer", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, sendFinal},
		{"no responders", fmt.Errorf("publish: %w", nats.ErrNoResponders), sendNotSent},
		{"no stream response", jetstream.ErrNoStreamResponse, sendNotSent},
		{"reconnect buffer full", nats.ErrReconnectBufExceeded, sendNotSent},
		{"reconnecting", nats.ErrConnectionReconnecting, sendNotSent},
		{"a 503 from JetStream", &jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}, sendNotSent},
		{"no peers for the replicas yet", &jetstream.APIError{Code: 400, ErrorCode: codeNoPeers, Description: "no suitable peers for placement"}, sendNotSent},
		{"timeout", fmt.Errorf("ack: %w", context.DeadlineExceeded), sendUnknown},
		{"nats timeout", nats.ErrTimeout, sendUnknown},
		{"duplicate id in process", &jetstream.APIError{Code: 409, ErrorCode: codeDuplicateInProcess}, sendUnknown},
		{"the caller cancelled", context.Canceled, sendFinal},
		{"anything else", errors.New("permissions violation"), sendFinal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := classifySend(tc.err); got != tc.want {
				t.Fatalf("classifySend(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}
