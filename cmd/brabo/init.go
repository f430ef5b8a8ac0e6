package main

// brabo init: the project folder a newcomer stands in becomes a brabo
// project of the server running on this machine, with a starting
// permissions.json and, with --agent, that agent's hook.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/agenthook"
	"github.com/brabo-dev/brabo/client"
	"github.com/brabo-dev/brabo/policy"
)

// slugOf makes a project slug of a folder's name: lower case, runs of
// anything else than letters and digits one dash, at most 63 bytes.
func slugOf(name string) string {
	s := regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(name), "-")
	s = strings.Trim(s, "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	return s
}

// startingPermissions is the permissions.json brabo init writes where
// there is none: the seeded read-only commands, nothing that runs code.
func startingPermissions() []byte {
	b, _ := json.MarshalIndent(map[string][]string{"allow": policy.SeedReadOnly(), "deny": {}, "ask": {}}, "", "  ")
	return append(b, '\n')
}

// runInit is `brabo init`.
func runInit(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("init")
	cf := addClientFlags(fl, false)
	slug := fl.String("slug", "", "the project's slug (default: made from the folder's name)")
	agent := fl.String("agent", "", "also install this agent's hook: claude, codex or gemini")
	dir := fl.String("dir", "", "the project folder (default: the current directory)")
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	switch *agent {
	case "", "claude", "codex", "gemini":
	default:
		return usageError(stderr, "init", "--agent %q: want claude, codex or gemini", *agent)
	}
	if *dir == "" {
		*dir, _ = os.Getwd()
	}
	root, err := filepath.Abs(*dir)
	if err != nil {
		return fail(stderr, "init", "%v", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return fail(stderr, "init", "%s is not a folder", root)
	}
	if *slug == "" {
		*slug = slugOf(filepath.Base(root))
	}
	api, err := cf.client(stderr)
	if err != nil {
		return fail(stderr, "init", "%v", err)
	}
	ctx := context.Background()
	ps, err := api.Projects(ctx)
	if err != nil {
		return fail(stderr, "init", "%v", reachError(err))
	}
	// --json: the lines for people are left out, and what init found or
	// made is printed once, at the end.
	out := stdout
	if *cf.json {
		out = io.Discard
	}
	created, wrote := false, false
	var p *brabo.Project
	for _, x := range ps {
		if x.Root == root {
			p = x
		}
	}
	if p != nil {
		fmt.Fprintf(out, "this folder is brabo project %s (%s) already: nothing changed\n", p.Slug, p.ID)
	} else {
		// The file first: the project's first trusted version is the file
		// as it is when the project is created.
		perm := filepath.Join(root, "permissions.json")
		if _, err := os.Lstat(perm); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(perm, startingPermissions(), 0o644); err != nil {
				return fail(stderr, "init", "%v", err)
			}
			wrote = true
			fmt.Fprintf(out, "wrote permissions.json: the agents' read-only commands (ls, cat, grep, git status, git diff, git log, …) run at once; everything else asks you\n")
		}
		made, err := api.CreateProject(ctx, client.NewProject{Slug: *slug, Mode: brabo.ModeLocal, Root: root})
		var ae *client.Error
		if errors.As(err, &ae) && ae.Code == brabo.CodeInvalidProject && strings.HasPrefix(ae.Message, "root:") {
			return fail(stderr, "init", "%v (a local project names a folder the server itself must reach: run brabo init on the server's machine)", err)
		}
		if err != nil {
			return fail(stderr, "init", "%v", err)
		}
		p = &brabo.Project{ID: made.ID, Slug: made.Slug, Root: root}
		created = true
		fmt.Fprintf(out, "created project %s (%s) for %s\n", p.Slug, p.ID, root)
	}
	if *agent != "" {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		hookCmd, err := hookCommand()
		if err != nil {
			return fail(stderr, "init", "%v", err)
		}
		err = agenthook.Install(ctx, agenthook.InstallOptions{Agent: *agent, Server: api.Base(), Token: api.Token(),
			ProjectID: p.ID, Root: root, HookCommand: hookCmd, Wait: agenthook.DefaultWait, Out: out})
		if err != nil {
			return fail(stderr, "init", "installing %s's hook: %v", *agent, err)
		}
	}
	fmt.Fprintf(out, "next: start your agent here; brabo queue lists what waits for you (export BRABO_PROJECT=%s)\n", p.Slug)
	if *cf.json {
		ans := map[string]any{"project": map[string]string{"id": p.ID, "slug": p.Slug, "root": p.Root},
			"created": created, "permissionsWritten": wrote, "hook": nil}
		if *agent != "" {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			for _, s := range agenthook.Status(ctx, agenthook.InstallOptions{Agent: *agent, Root: root}) {
				if s.Scope == "project" {
					ans["hook"] = s
				}
			}
		}
		printValue(stdout, ans)
	}
	return 0
}
