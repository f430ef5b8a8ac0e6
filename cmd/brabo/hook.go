package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/brabo-dev/brabo/agenthook"
)

// runHook is `brabo hook <agent> <event> --config FILE` (agenthook.Run);
// brabo install prefers the slim brabo-hook binary beside this one.
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return agenthook.Run(args, stdin, stdout, stderr)
}

// hookCommand is what the agents run: the slim brabo-hook beside this
// binary when there is one (it starts faster), else this binary's hook.
func hookCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return nil, err
	}
	slim := filepath.Join(filepath.Dir(exe), "brabo-hook")
	if fi, err := os.Stat(slim); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return []string{slim}, nil
	}
	return []string{exe, "hook"}, nil
}
