package executor_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/executor"
	"github.com/brabo-dev/brabo/internal/gitguard"
)

// planted is a program that appends to its marker (and passes its input
// through, as a filter must), written into the project as an agent would.
func planted(t *testing.T, dir string) (script, marker string) {
	t.Helper()
	marker = filepath.Join(realDir(t), "marker")
	script = filepath.Join(dir, "planted.sh")
	writeFile(t, script, "#!/bin/sh\necho ran >> '"+marker+"'\ncat\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	return script, marker
}

func ran(marker string) bool {
	_, err := os.Stat(marker)
	return err == nil
}

// TestGitActionsRefuseKeysThatNameAProgram: each key an agent could plant
// in .git/config that makes git run a program refuses every git action
// with repository_config_refused naming the key, and the program never
// runs. The filter plant is proven to work with plain git first.
func TestGitActionsRefuseKeysThatNameAProgram(t *testing.T) {
	for _, key := range []string{"filter.x.clean", "core.sshCommand", "credential.helper", "diff.external",
		"core.hooksPath", "core.pager", "include.path", "remote.origin.uploadpack", "url.x.insteadOf"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			work, _ := repo(t)
			script, marker := planted(t, work)
			git(t, work, "config", key, script)
			writeFile(t, filepath.Join(work, ".gitattributes"), "* filter=x diff=x\n")
			writeFile(t, filepath.Join(work, "new.txt"), "new\n")
			if key == "filter.x.clean" {
				cmd := exec.Command("git", "add", "-A", "--dry-run")
				cmd.Dir = work
				cmd.Run()
				if !ran(marker) {
					t.Fatal("the plant does not work with plain git, so the test proves nothing")
				}
				os.Remove(marker)
			}
			e := executor.New(executor.Options{})
			for _, req := range []brabo.ExecRequest{
				request(work, brabo.GitCommit, brabo.Payload{Message: "m"}),
				request(work, brabo.GitPush, brabo.Payload{Branch: "main"}),
				request(work, brabo.GitBranchCreate, brabo.Payload{Branch: "b"}),
				request(work, brabo.PrOpen, brabo.Payload{Branch: "main", Base: "other"}),
			} {
				res := mustRun(t, e, req)
				if res.Code != brabo.CodeRepositoryConfigRefused || !strings.Contains(res.Error, strings.ToLower(key[:strings.IndexByte(key, '.')])) {
					t.Errorf("%s: %+v", req.Action.Type, res)
				}
			}
			if ran(marker) {
				t.Fatal("the planted program ran")
			}
		})
	}
}

// TestGitActionsRefusePointersOutOfTheProject: the chain — a copy
// of .git inside the project whose config has a clean filter, the real
// .git's commondir pointing at it, `* filter=x` — is refused naming the
// filter; a commondir, gitfile or alternates leaving the project is
// refused by name. Plain git runs the planted filter.
func TestGitActionsRefusePointersOutOfTheProject(t *testing.T) {
	work, _ := repo(t)
	script, marker := planted(t, work)
	copyDir := filepath.Join(work, "cache", "gitcopy")
	os.MkdirAll(filepath.Dir(copyDir), 0o755)
	if out, err := exec.Command("cp", "-a", filepath.Join(work, ".git"), copyDir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	git(t, copyDir, "config", "--file", filepath.Join(copyDir, "config"), "filter.x.clean", script)
	writeFile(t, filepath.Join(work, ".git", "commondir"), copyDir+"\n")
	writeFile(t, filepath.Join(work, ".gitattributes"), "* filter=x\n")
	writeFile(t, filepath.Join(work, "new.txt"), "new\n")
	cmd := exec.Command("git", "add", "-A", "--dry-run")
	cmd.Dir = work
	cmd.Run()
	if !ran(marker) {
		t.Fatal("the plant does not work with plain git, so the test proves nothing")
	}
	os.Remove(marker)
	e := executor.New(executor.Options{})
	res := mustRun(t, e, request(work, brabo.GitCommit, brabo.Payload{Message: "m"}))
	if res.Code != brabo.CodeRepositoryConfigRefused || !strings.Contains(res.Error, "filter.x.clean") || res.Ran() {
		t.Errorf("the commit through the commondir: %+v", res)
	}
	if ran(marker) {
		t.Fatal("the planted filter ran")
	}

	outside := realDir(t)
	git(t, outside, "init", "-q")
	for _, tc := range []struct {
		name  string
		plant func(work string)
		want  error
	}{
		{"commondir", func(work string) {
			writeFile(t, filepath.Join(work, ".git", "commondir"), filepath.Join(outside, ".git")+"\n")
		}, gitguard.ErrCommondirOutside},
		{"gitfile", func(work string) {
			os.RemoveAll(filepath.Join(work, ".git"))
			writeFile(t, filepath.Join(work, ".git"), "gitdir: "+filepath.Join(outside, ".git")+"\n")
		}, gitguard.ErrGitfileOutside},
		{"alternates", func(work string) {
			writeFile(t, filepath.Join(work, ".git", "objects", "info", "alternates"), filepath.Join(outside, ".git", "objects")+"\n")
		}, gitguard.ErrAlternatesOutside},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work, _ := repo(t)
			tc.plant(work)
			res := mustRun(t, e, request(work, brabo.GitCommit, brabo.Payload{Message: "m"}))
			if res.Code != brabo.CodeRepositoryConfigRefused || !strings.Contains(res.Error, tc.want.Error()) {
				t.Errorf("%+v", res)
			}
			var refused *executor.RepositoryRefusedError
			if !errors.As(refusal(t, work), &refused) || !errors.Is(refused, tc.want) {
				t.Errorf("the refusal: %v", refused)
			}
		})
	}
}

// refusal is the guard's error for the repository at work, as the
// executor builds it.
func refusal(t *testing.T, work string) error {
	_, err := gitguard.Check(work, work)
	return &executor.RepositoryRefusedError{Type: brabo.GitCommit, Err: err}
}

// TestGitActionsObeyNoInheritedConfiguration: a filter defined in the
// operator's global configuration, or passed in GIT_CONFIG_COUNT, is not
// brabo's git's to obey; `* filter=x` then names an undefined driver,
// which git ignores, and the commit succeeds without running anything.
func TestGitActionsObeyNoInheritedConfiguration(t *testing.T) {
	work, _ := repo(t)
	script, marker := planted(t, realDir(t))
	global := filepath.Join(realDir(t), "gitconfig")
	writeFile(t, global, "[filter \"x\"]\n\tclean = "+script+"\n")
	writeFile(t, filepath.Join(work, ".gitattributes"), "* filter=x\n")
	writeFile(t, filepath.Join(work, "new.txt"), "new\n")
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL="+global, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=filter.y.clean",
		"GIT_CONFIG_VALUE_0="+script, "GIT_SSH_COMMAND="+script)
	e := executor.New(executor.Options{Env: env})
	mustSucceed(t, e, request(work, brabo.GitCommit, brabo.Payload{Message: "m"}))
	if ran(marker) {
		t.Fatal("a filter from the inherited configuration ran")
	}
	if got := git(t, work, "show", "HEAD:new.txt"); got != "new" {
		t.Errorf("the committed file: %q", got)
	}
}

// TestGitPushRunsNoHookHereOrOnALocalRemote: a pre-push hook planted in
// the project and a pre-receive hook in the local bare remote both run
// with plain git; an approved git_push and pr_open run neither.
func TestGitPushRunsNoHookHereOrOnALocalRemote(t *testing.T) {
	work, bare := repo(t)
	script, marker := planted(t, realDir(t))
	for _, hook := range []string{filepath.Join(work, ".git", "hooks", "pre-push"), filepath.Join(bare, "hooks", "pre-receive")} {
		writeFile(t, hook, "#!/bin/sh\n'"+script+"' </dev/null\n")
		os.Chmod(hook, 0o755)
	}
	commitOn(t, work, "main", "f.txt", "f\n")
	git(t, work, "push", "--quiet", "origin", "main:control")
	if !ran(marker) {
		t.Fatal("the hooks do not run with plain git, so the test proves nothing")
	}
	os.Remove(marker)
	commitOn(t, work, "main", "g.txt", "g\n")
	e := executor.New(executor.Options{})
	mustSucceed(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "main"}))
	mustSucceed(t, e, request(work, brabo.PrOpen, brabo.Payload{Branch: "main", Base: "control"}))
	if ran(marker) {
		t.Fatal("a hook ran for brabo's push")
	}
	// A key naming a program in the remote's own config refuses the push.
	git(t, bare, "config", "core.alternateRefsCommand", script)
	commitOn(t, work, "main", "h.txt", "h\n")
	res := mustRun(t, e, request(work, brabo.GitPush, brabo.Payload{Branch: "main"}))
	if res.Code != brabo.CodeRepositoryConfigRefused || !strings.Contains(res.Error, "core.alternaterefscommand") {
		t.Errorf("a push to a remote with a program in its config: %+v", res)
	}
}
