package brabo

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// NewToken returns a fresh bearer token (brb_…). Only its hash is stored.
func NewToken() string { return "brb_" + randomHex() }

// NewSessionSecret is a web session cookie's value (brs_…). Its prefix is
// not an API token's, so neither can be mistaken for the other in a log or
// a form.
func NewSessionSecret() string { return "brs_" + randomHex() }

func randomHex() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// HashToken is how tokens and session secrets are stored and looked up.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
