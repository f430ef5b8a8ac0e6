package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brabo-dev/brabo/agenthook"
)

// runHook is `brabo hook <agent> <event> --config FILE` (agenthook.Run);
// brabo install prefers the slim brabo-hook binary beside this one.
func runHook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return agenthook.Run(args, stdin, stdout, stderr)
}

// runInstall is `brabo install claude|codex|gemini [--project|--user]
// [--uninstall]`, and `brabo install [agent] --status`.
func runInstall(args []string, stdout, stderr io.Writer) int {
	agent := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		agent, args = args[0], args[1:]
	}
	fl := newFlags(strings.TrimSpace("install " + agent))
	var (
		project   = fl.Bool("project", false, "install in the project's settings (the default)")
		user      = fl.Bool("user", false, "install in the user's settings: every session of the user; folders that are no brabo project are left to the agent")
		uninstall = fl.Bool("uninstall", false, "remove what brabo install wrote, and revoke the hook agent's token in brabo")
		keepAgent = fl.Bool("keep-agent", false, "with --uninstall: remove the files only, leaving the hook agent's token live (brabo cannot be reached)")
		status    = fl.Bool("status", false, "say, per agent CLI, whether the hook is installed, found on disk, and reaches brabo (exit 1 when an installed one does not work)")
		server    = fl.String("server", envOr("BRABO_URL", "http://127.0.0.1:8080"), "brabo's address (BRABO_URL)")
		token     = fl.String("token", os.Getenv("BRABO_TOKEN"), "a maintainer's token, to create the hook agent (BRABO_TOKEN)")
		projectID = fl.String("project-id", os.Getenv("BRABO_PROJECT"), "the brabo project (BRABO_PROJECT)")
		root      = fl.String("root", "", "the project folder (default: the current directory)")
		name      = fl.String("name", "", "the hook agent's name in brabo (default: the agent's, claude-user for --user); a re-install re-uses it with a new token")
		wait      = fl.Duration("wait", agenthook.DefaultWait, "how long the hook waits for a human; the agent's hook timeout is 30 s longer")
		codex     = fl.String("codex", "", "the codex binary that reports the hooks' trust hashes (default: codex on PATH)")
	)
	if code, done := parseNoArgs(fl, args, stdout, stderr); done {
		return code
	}
	if *root == "" {
		*root, _ = os.Getwd()
	}
	if *status {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if !agenthook.WriteStatus(stdout, agenthook.Status(ctx, agenthook.InstallOptions{Agent: agent, Root: *root})) {
			return 1
		}
		return 0
	}
	if agent == "" {
		return usageError(stderr, "install", "which agent? claude, codex or gemini (brabo install claude), or --status")
	}
	if *project && *user {
		return usageError(stderr, "install "+agent, "--project or --user, not both")
	}
	hookCmd, err := hookCommand()
	if err != nil {
		return fail(stderr, "install "+agent, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = agenthook.Install(ctx, agenthook.InstallOptions{Agent: agent, User: *user, Uninstall: *uninstall, KeepAgent: *keepAgent,
		Server: *server, Token: *token, ProjectID: *projectID, Root: *root, Name: *name,
		HookCommand: hookCmd, Wait: *wait, Codex: *codex, Out: stdout})
	if err != nil {
		return fail(stderr, "install "+agent, "%v", err)
	}
	return 0
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
