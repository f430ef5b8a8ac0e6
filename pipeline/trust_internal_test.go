package pipeline

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// readDisk reuses its last read only while the file's size, time and
// identity stand still and the file was still when read: a file rewritten
// within the clock's granularity (same size, same time) is read again.
func TestReadDiskRereadsARacyFile(t *testing.T) {
	s := &Service{}
	path := filepath.Join(t.TempDir(), "permissions.json")
	write := func(content string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		d, err := s.readDisk(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(d.data)
	}

	// Just written: read again however still its metadata.
	now := time.Now()
	write(`{"deny": ["Terminal(aa)"]}`, now)
	if got := read(); got != `{"deny": ["Terminal(aa)"]}` {
		t.Fatalf("first read %q", got)
	}
	write(`{"deny": ["Terminal(bb)"]}`, now) // same size, same time
	if got := read(); got != `{"deny": ["Terminal(bb)"]}` {
		t.Fatalf("a racy rewrite was not read again: %q", got)
	}

	// Still for a while: the metadata stands for the content, until it moves.
	old := now.Add(-time.Hour)
	write(`{"deny": ["Terminal(cc)"]}`, old)
	if got := read(); got != `{"deny": ["Terminal(cc)"]}` {
		t.Fatalf("read %q", got)
	}
	d1, _ := s.readDisk(path)
	d2, _ := s.readDisk(path)
	if d1 != d2 || !d1.stable {
		t.Fatal("a still file was read again though nothing moved")
	}
	write(`{"deny": ["Terminal(dd)"]}`, old.Add(time.Minute))
	if got := read(); got != `{"deny": ["Terminal(dd)"]}` {
		t.Fatalf("a rewrite that moved the time was not read: %q", got)
	}
	write(`{"deny": ["Terminal(ddd)"]}`, old.Add(time.Minute))
	if got := read(); got != `{"deny": ["Terminal(ddd)"]}` {
		t.Fatalf("a rewrite that changed the size was not read: %q", got)
	}

	// Removed: the empty file.
	os.Remove(path)
	if d, err := s.readDisk(path); err != nil || d.data != nil || d.hash != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("a missing file: %+v %v", d, err)
	}
}
