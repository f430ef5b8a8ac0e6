//go:build unix

package agenthook

import (
	"os"
	"os/exec"
	"syscall"
)

// startWatcher starts `… hook codex|gemini watch` for the call whose
// state is at statePath, detached from the agent (its own session, no
// inherited output), so that the agent neither waits for it nor reads it. It is the same program
// the hook runs as: brabo-hook, or brabo with its "hook" word.
func startWatcher(configPath, statePath string) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	at := -1
	for i := 1; i+1 < len(os.Args); i++ {
		if e := os.Args[i] + " " + os.Args[i+1]; e == "codex pre-tool-use" || e == "gemini before-tool" {
			at = i
			break
		}
	}
	if at < 0 {
		return // not run as a hook's command line
	}
	prefix := append([]string(nil), os.Args[1:at]...)
	args := append(prefix, os.Args[at], "watch", "--config", configPath, "--state", statePath)
	cmd := exec.Command(exe, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cmd.Start() == nil {
		cmd.Process.Release()
	}
}
