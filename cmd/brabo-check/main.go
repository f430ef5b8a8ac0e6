// Command brabo-check is brabo check in a binary that links none of the
// server's dependencies (the model SDKs, the container client, SQLite,
// the git reader): the same code (internal/checkcmd), the same flags,
// output and exit codes, for scripts and CI jobs that run it once per
// decision. Go runs the initialisation of every package a binary links
// before main, so the full brabo binary cannot start as fast
// (docs/PERFORMANCE.md, "Performance of the hooks").
//
// Usage:
//
//	brabo-check [flags] -- 'command'
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/brabo-dev/brabo/internal/checkcmd"
)

const usage = `brabo-check: decide a command offline as brabo would, and explain every segment and rule
(the same as brabo check, in a binary that starts fast)

Usage:
  brabo-check [flags] -- 'command'
  brabo-check [flags] --stdin < command.sh
  brabo-check [flags] --type git_merge --target-branch main

Flags go before the command. The exit code is the decision: 0 auto_approve,
1 require_approval, 2 deny, 3 bad usage or a bad file (-h alone exits 0).

Flags:
`

func main() {
	os.Exit(checkcmd.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, func(w io.Writer, fl *flag.FlagSet) {
		fmt.Fprint(w, usage)
		fl.VisitAll(func(f *flag.Flag) {
			kind, text := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "  --%s %s\n      %s\n", f.Name, kind, text)
		})
	}))
}
