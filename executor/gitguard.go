package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/internal/gitguard"
)

// RepositoryRefusedError refuses a git action before git runs: the
// repository's configuration holds a key brabo's git does not obey, or
// its gitfile, commondir or alternates leave the project folder (Err,
// from internal/gitguard, says which). Execute turns it into a failed
// Result with Code repository_config_refused: nothing ran.
type RepositoryRefusedError struct {
	Type brabo.ActionType
	Err  error
}

func (e *RepositoryRefusedError) Error() string {
	return fmt.Sprintf("%s: brabo does not run git in this repository: %v", typeName(e.Type), e.Err)
}

// Unwrap returns gitguard's error (a *gitguard.ConfigError, or one
// wrapping gitguard.ErrCommondirOutside, ErrGitfileOutside or
// ErrAlternatesOutside).
func (e *RepositoryRefusedError) Unwrap() error { return e.Err }

// Code reports the stable code of the refusal.
func (e *RepositoryRefusedError) Code() brabo.Code { return brabo.CodeRepositoryConfigRefused }

// Key is the configuration key refused, "" when the refusal is about a
// gitfile, commondir or alternates.
func (e *RepositoryRefusedError) Key() string {
	var ce *gitguard.ConfigError
	if errors.As(e.Err, &ce) {
		return ce.Key
	}
	return ""
}

// guardRepo reads, as data, what git would obey in the repository holding
// dir inside root, before brabo's git runs there, and returns where that
// repository is. A folder in no repository passes, with a nil layout: git
// finds none either (git_repo_create makes one).
func guardRepo(t brabo.ActionType, root, dir string) (*gitguard.Layout, error) {
	l, err := gitguard.Check(root, dir)
	if err == nil || errors.Is(err, gitguard.ErrNoRepository) {
		return l, nil
	}
	return nil, &RepositoryRefusedError{Type: t, Err: err}
}

// localRemote returns the folder of a remote URL that is a path on this
// machine (a path, or file://…), relative ones taken from dir.
func localRemote(url, dir string) (string, bool) {
	if p, ok := strings.CutPrefix(url, "file://"); ok {
		return p, true
	}
	if !isLocalPath(url) {
		return "", false
	}
	if !filepath.IsAbs(url) {
		url = filepath.Join(dir, url)
	}
	return url, true
}

// remoteFlags are the options of a push, fetch, clone or ls-remote to
// the remote at url. A remote on this machine runs git's other half
// (receive-pack, upload-pack) here, as brabo's user, in the remote's
// repository, with the remote's configuration and hooks and without the
// -c options brabo gives (git clears them for a local transport): its
// configuration is checked as data like the project's, and its half runs
// with hooks off. A network remote runs on its own machine.
func (e *Executor) remoteFlags(t brabo.ActionType, url, dir string, push bool) ([]string, error) {
	path, ok := localRemote(url, dir)
	if !ok {
		return nil, nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil, nil // git fails on it, with its own message
	}
	if err := gitguard.CheckBare(path); err != nil {
		return nil, &RepositoryRefusedError{Type: t, Err: fmt.Errorf("the remote %s: %w", url, err)}
	}
	half := "upload-pack"
	if push {
		half = "receive-pack"
	}
	git := "'" + strings.ReplaceAll(e.opts.GitPath, "'", `'\''`) + "'"
	return []string{"--" + half + "=" + git + " -c core.hooksPath=/dev/null -c core.fsmonitor=false " + half}, nil
}
