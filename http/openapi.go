package http

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the API's OpenAPI 3.1 document; a test keeps it equal to the
// routes the server registers.
//
//go:embed openapi.json
var OpenAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(OpenAPI)
}
