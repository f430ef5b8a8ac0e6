package agenthook

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The refusals brabo has no record of: a call refused before it reached
// brabo, so that no action or event in a project says it happened (a
// folder that is no brabo project, a configuration that cannot be read).
// brabo mcp writes each as one JSON line in the hooks' own folder, which
// the agents' commands cannot read or write (ConfigDir).

// Refusal is one refused call with no record in brabo.
type Refusal struct {
	At     time.Time       `json:"at"`
	Via    string          `json:"via"` // "brabo mcp"
	Agent  string          `json:"agent"`
	Cwd    string          `json:"cwd"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input,omitempty"`
	Reason string          `json:"reason"`
}

// maxRefusals bounds the refusals file: past it, the file is moved to
// refusals.jsonl.1 (one older file kept) and a new one begun.
const maxRefusals = 4 << 20

// maxRefusalInput bounds the input one refusal keeps.
const maxRefusalInput = 4 << 10

// RefusalsFile is where the refusals are written:
// ConfigDir()/refusals.jsonl.
func RefusalsFile() (string, error) {
	dir, err := ConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "refusals.jsonl"), nil
}

// RecordRefusal appends r to the refusals file (0600, in a 0700 folder)
// and returns the file's path.
func RecordRefusal(r Refusal) (string, error) {
	path, err := RefusalsFile()
	if err != nil {
		return "", err
	}
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	if len(r.Input) > maxRefusalInput {
		r.Input, _ = json.Marshal(string(r.Input[:maxRefusalInput]) + "…")
	}
	line, err := json.Marshal(r)
	if err != nil {
		return path, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return path, fmt.Errorf("recording the refusal: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Size()+int64(len(line)) > maxRefusals {
		os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return path, fmt.Errorf("recording the refusal: %w", err)
	}
	_, werr := f.Write(append(line, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return path, fmt.Errorf("recording the refusal: %w", werr)
	}
	return path, nil
}

// ErrNotAProject is a folder that none of a hook configuration's projects
// holds (Guarded).
var ErrNotAProject = errUnknownFolder

// Guarded reports which of the configuration's projects holds dir: its
// id, or an error wrapping ErrNotAProject when none does (or the
// configuration's own error when it cannot be read).
func Guarded(configPath, dir string) (string, error) {
	cfg, err := LoadConfig(configPath)
	if err != nil {
		return "", err
	}
	p, err := cfg.project(dir)
	if err != nil {
		return "", err
	}
	return p.ID, nil
}
