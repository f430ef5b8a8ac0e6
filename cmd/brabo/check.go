package main

import (
	"flag"
	"io"
	"strings"

	"github.com/brabo-dev/brabo/internal/checkcmd"
)

// Exit codes of brabo check (internal/checkcmd).
const (
	exitAutoApprove     = checkcmd.ExitAutoApprove
	exitRequireApproval = checkcmd.ExitRequireApproval
	exitDeny            = checkcmd.ExitDeny
	exitCheckUsage      = checkcmd.ExitUsage
)

// runCheck is brabo check, the same code as the slim brabo-check binary.
func runCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return checkcmd.Run(args, stdin, stdout, stderr, func(w io.Writer, fl *flag.FlagSet) {
		printHelp(w, lookup("check"), fl)
	})
}

// shellQuote quotes s for a POSIX shell, for a command line brabo prints.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
