package main

// brabo import claude|codex|gemini: the rules an agent already has in a
// project, as permissions.json entries (docs/import.md).

import (
	"context"
	"errors"
	"fmt"
	"github.com/brabo-dev/brabo/agenthook"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo/cmd/brabo/internal/ruleimport"
)

// importMore is what brabo import -h says after the usage.
const importMore = `It reads, in the project folder (--dir, default the current directory):
  claude  .claude/settings.json and .claude/settings.local.json: permissions
          allow, deny and ask (Read, Edit, Write, Bash, WebFetch(domain:…),
          mcp__server__tool)
  codex   .codex/rules/*.rules: each prefix_rule, carried over only when
          codex execpolicy check (--codex, default codex on PATH) decides
          its pattern as brabo would
  gemini  .gemini/policies/*.toml: each [[rule]] (toolName, commandPrefix,
          mcpName, decision)
--from FILE adds another file of the same kind (~/.codex/rules/default.rules).
It prints the permissions.json entries the rules become and what it could not
carry over, and writes nothing unless --write: then it merges the entries into
the project's permissions.json (atomically; entries already there are kept
once). Like every change of the file, one that lets more through applies only
after a maintainer accepts it (brabo permissions show, accept).`

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

func runImport(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageError(stderr, "import", "which agent? claude, codex or gemini")
	}
	agent := args[0]
	if agent != "claude" && agent != "codex" && agent != "gemini" {
		return usageError(stderr, "import", "unknown agent %q: want claude, codex or gemini", agent)
	}
	name := "import " + agent
	fl := newFlags(name)
	dir := fl.String("dir", "", "the project folder (default: the current directory)")
	write := fl.Bool("write", false, "merge the entries into the project's permissions.json")
	asJSON := fl.Bool("json", false, "print the result as JSON")
	codex := fl.String("codex", "", "the codex binary that checks each rule (default: codex on PATH)")
	var from multiFlag
	fl.Var(&from, "from", "another rules file of the agent to read (repeatable)")
	if code, done := parseNoArgs(fl, args[1:], stdout, stderr); done {
		return code
	}
	root := *dir
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fail(stderr, name, "%v", err)
		}
		root = wd
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return fail(stderr, name, "--dir: %v", err)
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return fail(stderr, name, "--dir %s: not a folder", root)
	}
	var res *ruleimport.Result
	switch agent {
	case "claude":
		res, err = ruleimport.Claude(root, from)
	case "gemini":
		res, err = ruleimport.Gemini(root, from)
	case "codex":
		var bin string
		// No codex is an error only where a rule needs its check
		// (ruleimport says so); one an agent could have written is never run.
		if bin, err = agenthook.CodexBinary(*codex, root); err != nil && !errors.Is(err, agenthook.ErrNoCodex) {
			return fail(stderr, name, "%v", err)
		}
		res, err = ruleimport.Codex(context.Background(), root, from, bin)
	}
	if err != nil {
		return fail(stderr, name, "%v", err)
	}
	var added [3][]string
	if *write {
		if added, err = res.Write(root); err != nil {
			return fail(stderr, name, "writing permissions.json: %v", err)
		}
	}
	if *asJSON {
		out := struct {
			*ruleimport.Result
			Written bool                `json:"written"`
			Added   map[string][]string `json:"added,omitempty"`
		}{Result: res, Written: *write}
		if *write {
			out.Added = map[string][]string{"allow": added[0], "deny": added[1], "ask": added[2]}
		}
		printValue(stdout, out)
		return 0
	}
	printImport(stdout, res)
	switch n := len(added[0]) + len(added[1]) + len(added[2]); {
	case !*write:
		fmt.Fprintln(stdout, "nothing written: brabo import "+agent+" --write merges these entries into permissions.json")
	case n == 0:
		fmt.Fprintln(stdout, "permissions.json already holds every entry: nothing written")
	default:
		fmt.Fprintf(stdout, "wrote %d new entries into %s; a change that lets more through applies once a maintainer accepts it (brabo permissions show)\n",
			n, filepath.Join(root, "permissions.json"))
	}
	return 0
}

// printImport prints an import's entries, what it did not carry over, and
// its notes.
func printImport(w io.Writer, res *ruleimport.Result) {
	if len(res.Files) == 0 {
		fmt.Fprintf(w, "no %s rules found\n", res.Agent)
	} else {
		fmt.Fprintf(w, "read %s\n", strings.Join(res.Files, ", "))
	}
	if len(res.Entries) > 0 {
		fmt.Fprintln(w, "permissions.json entries:")
		for _, e := range res.Entries {
			fmt.Fprintf(w, "  %-5s %s    (%s: %s)\n", e.List, e.Pattern, e.From, e.Rule)
		}
	}
	if len(res.NotCarried) > 0 {
		fmt.Fprintln(w, "not carried over:")
		for _, s := range res.NotCarried {
			fmt.Fprintf(w, "  %s: %s — %s\n", s.From, s.Rule, s.Why)
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
