package client_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// The client imports nothing of fledger's, so it declares its own copies
// of the wire types. Each of its JSON fields must be one the server's
// type has, with the same JSON kind: a field renamed or retyped on the
// server fails here instead of decoding silently as zero in a gateway.
func TestWireTypes_ClientMirrorsTheServer(t *testing.T) {
	for _, c := range []struct {
		client, server any
		// notWire are the client's fields not read from the body.
		notWire []string
	}{
		{client.BeginRequest{}, serve.BeginRequest{}, nil},
		{client.Step{}, serve.TurnStep{}, nil},
		{client.Next{}, serve.Next{}, nil},
		{client.Notice{}, serve.Notice{}, nil},
		{client.Outcome{}, serve.OutcomeRequest{}, nil},
		{client.ProviderError{}, classify.ProviderError{}, nil},
		{client.Profile{}, serve.ProfileView{}, nil},
		{client.Error{}, serve.ErrorBody{}, []string{"Status"}}, // the HTTP status line
	} {
		ct, st := reflect.TypeOf(c.client), reflect.TypeOf(c.server)
		server, own := jsonFields(st), jsonFields(ct)
		for _, n := range c.notWire {
			delete(own, n)
		}
		for name, kind := range own {
			sk, ok := server[name]
			switch {
			case !ok:
				t.Errorf("client.%s field %q: the server's %s has no such field", ct.Name(), name, st)
			case sk != kind:
				t.Errorf("client.%s field %q is a JSON %s, the server's %s has a %s", ct.Name(), name, kind, st, sk)
			}
		}
	}
}

// jsonFields are t's JSON field names with the JSON kind of each.
func jsonFields(t reflect.Type) map[string]string {
	out := map[string]string{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = jsonKind(f.Type)
	}
	return out
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}
