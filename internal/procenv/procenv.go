// Package procenv builds the environment of every process brabo starts:
// approved terminal commands, git actions, and brabo's own git
// bookkeeping. It is the one place that decides what a child process sees,
// so that no exec can hand a program the agent may have written (a hook, a
// core.fsmonitor, a test) the server's own secrets: its API keys, its
// database URL, its token.
//
// Every environment it builds also carries git's safety configuration
// through GIT_CONFIG_COUNT (safe.bareRepository=explicit,
// core.fsmonitor=false), which git reads with the precedence of `git -c`:
// above the repository's .git/config and above any embedded bare
// repository's config, so a planted fsmonitor or a planted bare repository
// never runs.
package procenv

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// kept are the variables a build or a test needs; nothing else of the
// server's environment reaches a child unless the operator names it
// (--pass-env). GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM and
// GIT_CONFIG_NOSYSTEM are the operator's choice of git configuration
// files, not secrets.
var kept = map[string]bool{}

func init() {
	for _, n := range []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR", "TERM", "SHELL",
		"GOPATH", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOFLAGS", "CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME",
		"PNPM_HOME", "NVM_DIR", "PYENV_ROOT", "VIRTUAL_ENV",
		"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"} {
		kept[n] = true
	}
}

// never are dropped even when named with --pass-env: they make bash run
// or look up something Decide cannot see.
var never = map[string]bool{"BASH_ENV": true, "ENV": true, "CDPATH": true, "GLOBIGNORE": true,
	"SHELLOPTS": true, "BASHOPTS": true}

// secretNames are the variables brabo holds secrets in (besides every
// BRABO_* one): the models' keys and the database's URL and password.
var secretNames = map[string]bool{"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true,
	"DATABASE_URL": true, "PGPASSWORD": true, "PGPASSFILE": true}

// Secret reports whether name is a variable brabo holds a secret in, or
// may: every BRABO_* variable (the database URL BRABO_DB, the token
// BRABO_TOKEN…), the models' API keys, DATABASE_URL and any *_DATABASE_URL,
// and PostgreSQL's password variables. Filter never passes one, and
// CheckPass refuses to be asked to.
func Secret(name string) bool {
	return secretNames[name] || strings.HasPrefix(name, "BRABO_") || strings.HasSuffix(name, "_DATABASE_URL")
}

// ErrSecretPass is the error of a --pass-env that names a secret.
var ErrSecretPass = errors.New("pass_env_secret")

// CheckPass refuses a --pass-env list that names a variable brabo holds a
// secret in (Secret), or one whose value in environ is one of secrets (the
// values brabo holds: the database URL given with --db, say, under
// another name). The error wraps ErrSecretPass and names the variable.
func CheckPass(environ, pass []string, secrets ...string) error {
	values := map[string]string{}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		values[name] = value
	}
	for _, n := range pass {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if Secret(n) {
			return fmt.Errorf("--pass-env %s: %w: brabo holds its own secrets in this variable (BRABO_*, the models' API keys, the database URL and password), and never passes it to commands", n, ErrSecretPass)
		}
		v, ok := values[n]
		if !ok || v == "" {
			continue
		}
		for _, sec := range secrets {
			if sec != "" && v == sec {
				return fmt.Errorf("--pass-env %s: %w: its value is one of brabo's secrets (the database URL, a model's key or a token), which no command is given", n, ErrSecretPass)
			}
		}
	}
	return nil
}

// Filter returns the variables of environ ("NAME=value") a child may see:
// the ones a build or a test needs (PATH, HOME, LANG, LC_*, the Go, Rust,
// Java and Node toolchains' own…) and the ones named in pass; never the
// server's secrets (API keys, database URLs, BRABO_*: Secret), even when
// named, and never the
// variables that make bash run or look up something Decide cannot see
// (BASH_ENV, ENV, CDPATH…), even when named.
func Filter(environ []string, pass []string) []string {
	extra := map[string]bool{}
	for _, n := range pass {
		if n = strings.TrimSpace(n); n != "" {
			extra[n] = true
		}
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if never[name] || Secret(name) {
			continue
		}
		if kept[name] || extra[name] || strings.HasPrefix(name, "LC_") {
			out = append(out, kv)
		}
	}
	return out
}

// Own is Filter of this process's environment with nothing named: what a
// child gets when its caller was given no environment of its own.
func Own() []string { return Filter(os.Environ(), nil) }

// Set returns base without the variables named in set, followed by set
// ("NAME=value" entries), so that each name appears once and set wins.
func Set(base []string, set ...string) []string {
	names := make(map[string]bool, len(set))
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if !names[name] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// Drop returns env without the variables named.
func Drop(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			if name == n {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// GitSafety is the git configuration every process brabo starts carries:
// no bare repository is used unless named (--git-dir, GIT_DIR), so `cd x
// && git status` in a planted bare repository does not read its config;
// and no filesystem monitor runs, whatever a config file says.
var GitSafety = []Config{{"safe.bareRepository", "explicit"}, {"core.fsmonitor", "false"}}

// NoHooks turns a repository's hooks off: brabo's own git runs none of
// them unless the project's maintainer turned them on.
var NoHooks = Config{"core.hooksPath", os.DevNull}

// Config is one git configuration entry: a key and its value.
type Config struct{ Key, Value string }

// WithGitConfig appends entries to env's git command-line configuration
// (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>), after the
// entries it already has, so that both count and later entries win over
// earlier ones for a single-valued key. A count git would refuse (not a
// number, negative) is dropped with its entries: git would otherwise stop
// with "bogus count" and the safety entries would never apply.
func WithGitConfig(env []string, entries ...Config) []string {
	if len(entries) == 0 {
		return env
	}
	n := 0
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_COUNT="); ok {
			c, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || c < 0 {
				env, n = dropGitConfig(env), 0
				break
			}
			n = c
		}
	}
	set := make([]string, 0, 2*len(entries)+1)
	for _, e := range entries {
		set = append(set, "GIT_CONFIG_KEY_"+strconv.Itoa(n)+"="+e.Key, "GIT_CONFIG_VALUE_"+strconv.Itoa(n)+"="+e.Value)
		n++
	}
	set = append(set, "GIT_CONFIG_COUNT="+strconv.Itoa(n))
	return Set(env, set...)
}

// dropGitConfig removes GIT_CONFIG_COUNT and every GIT_CONFIG_KEY_n and
// GIT_CONFIG_VALUE_n.
func dropGitConfig(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == "GIT_CONFIG_COUNT" || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Child is the environment of a process brabo starts: base (already
// filtered: Filter or Own) with set applied, and git's safety
// configuration appended, followed by extra git entries (NoHooks for
// brabo's own git).
func Child(base []string, set []string, extra ...Config) []string {
	return WithGitConfig(Set(base, set...), append(append([]Config(nil), GitSafety...), extra...)...)
}
