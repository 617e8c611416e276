package apispec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Contract checks HTTP answers against an OpenAPI document.
type Contract struct {
	doc    *openapi3.T
	router routers.Router
	// errorBody is components.schemas.ErrorBody: the body of an answer to
	// a request that matches no operation.
	errorBody *openapi3.Schema
}

// textBodies registers, once, the decoders of the text bodies the API
// answers beside JSON.
var textBodies sync.Once

// NewContract loads the document raw (YAML) for checking answers. Its
// servers are dropped, so a request to any host (a test server's port)
// finds its operation.
func NewContract(raw []byte) (*Contract, error) {
	textBodies.Do(func() {
		// Prometheus answers OpenMetrics text when asked; its body is text.
		openapi3filter.RegisterBodyDecoder("application/openmetrics-text", openapi3filter.PlainBodyDecoder)
	})
	doc, err := Load(raw)
	if err != nil {
		return nil, err
	}
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("apispec: router: %w", err)
	}
	eb := doc.Components.Schemas["ErrorBody"]
	if eb == nil || eb.Value == nil {
		return nil, errors.New("apispec: the document has no components.schemas.ErrorBody")
	}
	return &Contract{doc: doc, router: router, errorBody: eb.Value}, nil
}

// Answer is one checked answer.
type Answer struct {
	// Method and Path are the request's; Operation is the operationId of
	// the operation it matched ("" = none).
	Method, Path, Operation string
	Status                  int
	// Code is the error body's error ("" for a success or a body that is
	// not an error body).
	Code string
	// Err says how the answer breaks the contract (nil = it keeps it).
	Err error
}

// Check validates one answer to req: its status is declared for the
// operation req matches, with its headers (required ones present) and its
// body (Content-Type and schema, and no object field the schema does not
// declare: see undeclared). An answer to a request that matches no operation (an unknown
// path, a method the path does not take) must be an error body; a 405 must
// carry Allow. A HEAD request is checked as its GET without the body.
func (c *Contract) Check(req *http.Request, status int, header http.Header, body []byte) Answer {
	a := Answer{Method: req.Method, Path: req.URL.Path, Status: status}
	if status >= 400 {
		var eb struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &eb) == nil {
			a.Code = eb.Error
		}
	}
	r := req
	if req.Method == http.MethodHead {
		r = req.Clone(context.Background())
		r.Method = http.MethodGet
	}
	route, params, err := c.router.FindRoute(r)
	if err != nil {
		a.Err = c.checkUnmatched(status, header, body)
		return a
	}
	a.Operation = route.Operation.OperationID
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
			ExcludeResponseBody: req.Method == http.MethodHead},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		a.Err = fmt.Errorf("%s %s (%s) answered %d: %w", req.Method, req.URL.Path, a.Operation, status, err)
		return a
	}
	if req.Method != http.MethodHead {
		if err := checkUndeclared(route, status, header, body); err != nil {
			a.Err = fmt.Errorf("%s %s (%s) answered %d: %w", req.Method, req.URL.Path, a.Operation, status, err)
		}
	}
	return a
}

// checkUndeclared fails a JSON body with a field its schema does not
// declare: a schema that lists properties and says nothing of others
// allows them, but a client generated from the document would not know
// the field.
func checkUndeclared(route *routers.Route, status int, header http.Header, body []byte) error {
	ref := route.Operation.Responses.Status(status)
	if ref == nil || ref.Value == nil {
		return nil
	}
	mt := ref.Value.Content.Get(header.Get("Content-Type"))
	if mt == nil || mt.Schema == nil || !strings.HasPrefix(header.Get("Content-Type"), "application/json") {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("the body is not JSON: %w", err)
	}
	return undeclared(mt.Schema.Value, v, "")
}

// undeclared walks v with its schema s and reports the first object field
// that s does not declare (its properties, those of its allOf, anyOf and
// oneOf alternatives), unless s allows additional properties explicitly.
func undeclared(s *openapi3.Schema, v any, at string) error {
	if s == nil {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		props := map[string]*openapi3.Schema{}
		collect(s, props)
		if len(props) == 0 || (s.AdditionalProperties.Has != nil && *s.AdditionalProperties.Has) || s.AdditionalProperties.Schema != nil {
			return nil
		}
		for _, k := range sortedKeys(v) {
			p, ok := props[k]
			if !ok {
				return fmt.Errorf("field %s%s is not in the document", at, k)
			}
			if err := undeclared(p, v[k], at+k+"."); err != nil {
				return err
			}
		}
	case []any:
		if s.Items == nil {
			return nil
		}
		for i, x := range v {
			if err := undeclared(s.Items.Value, x, fmt.Sprintf("%s%d.", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// collect adds the properties s declares, with those of its
// alternatives, to props.
func collect(s *openapi3.Schema, props map[string]*openapi3.Schema) {
	for k, p := range s.Properties {
		if p != nil {
			props[k] = p.Value
		}
	}
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, alt := range group {
			if alt != nil && alt.Value != nil {
				collect(alt.Value, props)
			}
		}
	}
}

// checkUnmatched checks the answer to a request that matches no operation:
// an ErrorBody in JSON, and Allow on a 405.
func (c *Contract) checkUnmatched(status int, header http.Header, body []byte) error {
	if status < 400 {
		return fmt.Errorf("status %d on a path and method of no operation", status)
	}
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("%d on no operation: Content-Type %q, want application/json", status, ct)
	}
	if status == http.StatusMethodNotAllowed && header.Get("Allow") == "" {
		return errors.New("405 without an Allow header")
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%d on no operation: the body is not JSON: %w", status, err)
	}
	opts := []openapi3.SchemaValidationOption{openapi3.VisitAsResponse(), openapi3.MultiErrors()}
	if c.doc.IsOpenAPI31OrLater() {
		opts = append(opts, openapi3.EnableJSONSchema2020())
	}
	if err := c.errorBody.VisitJSON(v, opts...); err != nil {
		return fmt.Errorf("%d on no operation: not an ErrorBody: %w", status, err)
	}
	return nil
}

// Middleware serves next and checks each of its answers, calling seen
// with the result (from the server's goroutines). The answer reaches the
// client unchanged; at most maxChecked bytes of its body are kept for the
// check (a larger body fails it).
func (c *Contract) Middleware(next http.Handler, seen func(Answer)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &teeWriter{ResponseWriter: w}
		next.ServeHTTP(tw, r)
		a := c.Check(r, tw.code(), tw.Header(), tw.body.Bytes())
		if tw.over && a.Err == nil {
			a.Err = fmt.Errorf("%s %s: body larger than %d bytes, not checked", r.Method, r.URL.Path, maxChecked)
		}
		seen(a)
	})
}

// maxChecked bounds the body kept for a check.
const maxChecked = 16 << 20

// teeWriter passes an answer through and keeps its status and body.
type teeWriter struct {
	http.ResponseWriter
	mu     sync.Mutex
	status int
	body   bytes.Buffer
	over   bool
}

func (w *teeWriter) WriteHeader(code int) {
	w.mu.Lock()
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.body.Len()+len(b) <= maxChecked {
		w.body.Write(b)
	} else {
		w.over = true
	}
	w.mu.Unlock()
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) code() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
