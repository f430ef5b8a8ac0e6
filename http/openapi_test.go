package http

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
)

// The OpenAPI document and the registered routes name the same operations.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
			var o struct {
				Summary   string                     `json:"summary"`
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(op, &o); err != nil || o.Summary == "" || len(o.Responses) == 0 {
				t.Errorf("%s %s: an operation needs a summary and responses", method, path)
			}
			if _, ok := o.Responses["401"]; !ok {
				t.Errorf("%s %s: every /v1 operation documents 401", method, path)
			}
		}
	}
	registered := map[string]bool{}
	for _, r := range routes {
		registered[r.method+" "+r.pattern] = true
	}
	var missing, extra []string
	for k := range registered {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	for k := range documented {
		if !registered[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes missing from openapi.json: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("openapi.json documents routes the server does not have: %v", extra)
	}
}

// Every error code the API answers with is in the document's list.
func TestOpenAPIListsEveryErrorCode(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas struct {
				Error struct {
					Properties struct {
						Code struct {
							Enum []string `json:"enum"`
						} `json:"code"`
					} `json:"properties"`
				} `json:"Error"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, c := range doc.Components.Schemas.Error.Properties.Code.Enum {
		listed[c] = true
	}
	for _, code := range brabo.Codes() {
		if code == brabo.CodeCSRF {
			continue // the web page's forms alone answer it, as a page
		}
		if _, answered := code.HTTPStatus(); answered && !listed[string(code)] {
			t.Errorf("the API answers with %q, which openapi.json's Error.code does not list", code)
		}
	}
}
