package events_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/micro"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// withoutNATS is a Store that is not the JetStream one (as the in-memory
// store is not).
type withoutNATS struct{ events.Store }

// A service is added on the JetStream store's connection; a store without
// NATS is refused with ErrNoConnection, for the service and for the raw
// dependency measurements alike.
func TestAddService_OnTheStoresConnection(t *testing.T) {
	st, _ := testutil.OpenStore(t)
	svc, err := events.AddService(st, micro.Config{Name: "fledger-test", Version: "1.0.0"})
	testutil.NoError(t, err)
	if info := svc.Info(); info.Name != "fledger-test" {
		t.Fatalf("service info %+v", info)
	}
	testutil.NoError(t, svc.Stop())

	_, err = events.AddService(withoutNATS{st}, micro.Config{Name: "fledger-test", Version: "1.0.0"})
	testutil.ErrorIs(t, err, events.ErrNoConnection)
	_, err = events.NewRawBench(context.Background(), withoutNATS{st}, 1, false)
	testutil.ErrorIs(t, err, events.ErrNoConnection)
	_, err = events.NewRawReader(context.Background(), withoutNATS{st})
	testutil.ErrorIs(t, err, events.ErrNoConnection)
}
