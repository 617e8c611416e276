package apispec_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/apispec"
)

// clean is a small document that lints clean; each case of
// TestLint_ReportsEachMistake changes one line of it.
const clean = `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /v1/things/{id}:
    get:
      operationId: getThing
      parameters:
        - {name: id, in: path, required: true, description: "The thing's id", schema: {type: string}}
      responses:
        "200":
          description: The thing
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
  /v1/things:
    get:
      operationId: listThings
      parameters:
        - {name: limit, in: query, description: "At most this many", schema: {type: integer, default: 5}}
      responses:
        "200": {description: The things}
    post:
      operationId: addThing
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/ThingRequest"}
      responses:
        "200": {description: Added}
components:
  schemas:
    ThingRequest:
      type: object
      properties:
        kind: {enum: [a, b], description: "The kind (absent = a)"}
        tags: {type: array, items: {$ref: "#/components/schemas/Tag"}, description: "Tags"}
    Tag:
      type: object
      properties:
        weight: {type: integer, description: "The weight (absent = 1)"}
    Thing:
      type: object
      properties:
        id: {type: string, description: "The id"}
        note: {type: string, description: "What was wrong, in words"}
`

// Each mistake the lint exists for is reported, in exact words.
func TestLint_ReportsEachMistake(t *testing.T) {
	if got := apispec.Lint([]byte(clean)); len(got) != 0 {
		t.Fatalf("the clean document: %q", got)
	}
	cases := []struct {
		name, old, new string
		want           []string
	}{
		{"flow mapping trap", `description: "What was wrong, in words"`, `description: What was wrong, in words`, []string{
			"#/components/schemas/Thing/properties/note/in words: null value (quote a flow mapping's text that holds a comma)",
			"kin-openapi: ",
		}},
		{"property name with white space", `note: {type: string`, `"in words": {type: string`, []string{
			`#/components/schemas/Thing/properties/in words: property name "in words" has white space`,
		}},
		{"duplicate operationId", "operationId: listThings", "operationId: getThing", []string{
			`#/paths/~1v1~1things~1{id}/get: operationId "getThing" is also #/paths/~1v1~1things/get's`,
			"kin-openapi: ",
		}},
		{"operationId not camelCase", "operationId: listThings", "operationId: list_things", []string{
			`#/paths/~1v1~1things/get: operationId "list_things" is not camelCase`,
		}},
		{"no operationId", "      operationId: listThings\n", "", []string{
			"#/paths/~1v1~1things/get: no operationId",
		}},
		{"unresolved $ref", `#/components/schemas/Thing"`, `#/components/schemas/Thin"`, []string{
			`#/paths/~1v1~1things~1{id}/get/responses/200/content/application~1json/schema: $ref "#/components/schemas/Thin" does not resolve`,
			"kin-openapi: ",
		}},
		{"property without description", `id: {type: string, description: "The id"}`, `id: {type: string}`, []string{
			"#/components/schemas/Thing/properties/id: property has no description",
		}},
		{"parameter without description", `description: "At most this many", `, "", []string{
			"#/paths/~1v1~1things/get/parameters/0: parameter limit has no description",
		}},
		{"default in a request body", `kind: {enum: [a, b], description`, `kind: {enum: [a, b], default: a, description`, []string{
			`#/components/schemas/ThingRequest/properties/kind: a request body property has a default (a generator then types it required); say "absent = …" in its description`,
		}},
		{"default in a request body, nested", `weight: {type: integer, description`, `weight: {type: integer, default: 1, description`, []string{
			`#/components/schemas/Tag/properties/weight: a request body property has a default (a generator then types it required); say "absent = …" in its description`,
		}},
		{"default not of its schema (kin-openapi)", "default: 5", `default: "five"`, []string{
			"kin-openapi: ",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(clean, tc.old) {
				t.Fatalf("%q is not in the clean document", tc.old)
			}
			got := apispec.Lint([]byte(strings.Replace(clean, tc.old, tc.new, 1)))
			// kin-openapi's words are its own: the test asserts that its
			// line is there.
			for i, p := range got {
				if strings.HasPrefix(p, "kin-openapi: ") {
					t.Logf("%s", p)
					got[i] = "kin-openapi: "
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
