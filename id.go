package brabo

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewID returns a random identifier with a prefix ("act_…").
//
// The first 6 bytes are the time in milliseconds, so identifiers sort by
// creation and new rows land at the end of their index instead of on a
// random page (fewer pages written per commit); the other 10 are random.
func NewID(prefix string) string {
	var b [16]byte
	ms := time.Now().UnixMilli()
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	if _, err := rand.Read(b[6:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return prefix + "_" + hex.EncodeToString(b[:])
}
