package e2e

import "github.com/brabo-dev/brabo/internal/checkcmd"

// The exit codes the tests expect of the binary. These are brabo's contract
// with the scripts that run it (cmd/brabo/cli.go). They are
// written here as numbers, not imported: if the binary's codes moved, these
// tests would catch it. brabo check's codes are its decision, and are
// checkcmd's.
const (
	exitFailure     = 1   // the command could not do its work
	exitUsage       = 2   // bad usage
	exitInterrupted = 130 // 128+SIGINT, what a shell reports for a Ctrl-C

	exitAutoApprove     = checkcmd.ExitAutoApprove
	exitRequireApproval = checkcmd.ExitRequireApproval
	exitDeny            = checkcmd.ExitDeny
	exitCheckUsage      = checkcmd.ExitUsage
)
