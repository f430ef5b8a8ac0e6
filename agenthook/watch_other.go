//go:build !unix

package agenthook

// startWatcher does nothing where a process cannot be detached: a Codex
// call without PostToolUse stays unreported.
func startWatcher(configPath, statePath string) {}
