package executor

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// capBuf keeps the first max bytes written to it and counts the rest. Write
// never fails, so a command producing more than the cap is never blocked or
// broken by it.
type capBuf struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

func newCapBuf(max int) *capBuf { return &capBuf{max: max} }

func (b *capBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.max - len(b.buf)
	if room >= len(p) {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	} else {
		room = 0
	}
	b.dropped += int64(len(p) - room)
	return len(p), nil
}

// truncated reports whether bytes were dropped.
func (b *capBuf) truncated() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped > 0
}

// String returns what was kept; when bytes were dropped it ends on a whole
// UTF-8 character and carries the marker naming how many bytes are missing.
func (b *capBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == 0 {
		return string(b.buf)
	}
	kept, dropped := b.buf, b.dropped
	// Do not end on half a character: the cut is at a byte count.
	for i := len(kept) - 1; i >= 0 && i >= len(kept)-utf8.UTFMax; i-- {
		if utf8.RuneStart(kept[i]) {
			if !utf8.FullRune(kept[i:]) {
				dropped += int64(len(kept) - i)
				kept = kept[:i]
			}
			break
		}
	}
	return string(kept) + truncationMarker(dropped)
}

// truncationMarker is appended to an output that was cut.
func truncationMarker(dropped int64) string {
	return fmt.Sprintf("\n[brabo: output truncated, %d more bytes]\n", dropped)
}
