// Package modelhttp holds what the HTTP model providers (model/openai,
// model/anthropic) share about a call that went wrong below their APIs.
// The model package itself does no I/O, and one provider may not import
// another, so the shared part lives here, as internal/sqlstore does for the
// stores. It imports no SDK.
package modelhttp

import (
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/brabo-dev/brabo/model"
)

// UnreadError is the error for a call that got no answer the provider's
// SDK could read: an error status whose body is not the API's JSON (a
// proxy's HTML page) carries that body, shortened; a call with no answer at
// all (refused, reset, timed out) is worth another try. Providers share
// it, so a failing network reads the same whichever model runs.
func UnreadError(provider string, res *http.Response, err error) *model.Error {
	if res == nil {
		return &model.Error{Provider: provider, Retryable: true, Message: err.Error()}
	}
	msg := err.Error()
	if res.StatusCode >= 400 {
		if b := BodyText(res); b != "" {
			msg = b
		}
	}
	return &model.Error{Provider: provider, Status: res.StatusCode, Retryable: model.RetryableStatus(res.StatusCode), Message: msg}
}

// BodyText reads what is left of a response's body, at most 4 KiB, and
// returns it trimmed and shortened to 500 bytes ("" for none).
func BodyText(res *http.Response) string {
	if res == nil || res.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	return Abbreviate(strings.TrimSpace(string(b)), 500)
}

// Abbreviate shortens s to at most n bytes at a rune boundary, marking the
// cut with "…".
func Abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
