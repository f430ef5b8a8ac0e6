package http

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestVendoredHTMXIsThePinnedOne keeps the embedded htmx the exact file
// web/static/VERSIONS names: a changed byte is a new dependency, to be
// chosen, not to slip in.
func TestVendoredHTMXIsThePinnedOne(t *testing.T) {
	js, err := webStatic.ReadFile("web/static/htmx.min.js")
	if err != nil {
		t.Fatal(err)
	}
	versions, err := webStatic.ReadFile("web/static/VERSIONS")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(js)
	if !strings.Contains(string(versions), "sha256 "+hex.EncodeToString(sum[:])) {
		t.Fatalf("htmx.min.js has sha256 %x, which VERSIONS does not name:\n%s", sum, versions)
	}
	if !strings.Contains(string(js), `version:"2.0.11"`) {
		t.Error("htmx.min.js does not say it is 2.0.11")
	}
}

// TestCSRFTokenIsBoundToTheSession: two sessions never share a token, and
// the token reveals nothing a page without the session could compute.
func TestCSRFTokenIsBoundToTheSession(t *testing.T) {
	a, b := csrfFor("brb_one"), csrfFor("brb_two")
	if a == b || a == "" {
		t.Fatalf("csrf tokens %q and %q", a, b)
	}
	if csrfFor("brb_one") != a {
		t.Fatal("the token of one session changed")
	}
	if strings.Contains(a, "brb_one") {
		t.Fatal("the token holds the session")
	}
}
