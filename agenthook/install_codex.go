package agenthook

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Codex reads hooks from config.toml ([[hooks.PreToolUse]] …) and runs a
// hook only once it is trusted: an untrusted hook is skipped silently. The
// trust is a [hooks.state."<key>"] trusted_hash entry in the user's
// config.toml, the hash being the one `codex app-server` reports for the
// hook (hooks/list); a project's .codex/config.toml is read only when the
// project is trusted ([projects."<folder>"] trust_level). brabo install
// writes all of it between two marker lines, which it replaces when run
// again and removes with --uninstall; the rest of the files is kept as it
// is (brabo reads no TOML: it never rewrites the user's own lines).

const (
	codexBegin = "# >>> brabo install codex: written by brabo, replaced by brabo install, removed by --uninstall >>>"
	codexEnd   = "# <<< brabo install codex <<<"
)

// codexFailClosed wraps the deciding hooks' command. Codex 0.171.0 runs
// the tool when a hook fails (its program missing, killed, any exit but
// 2), whatever its approval_policy or sandbox_mode, and its hooks have no
// option that changes that (docs/hooks.md, "When the hook is missing or
// killed"); so the shell Codex runs the hook with turns every end but an
// allow (0) into a block (2). The hook killed while it waits is the hook's
// process, not this shell, which still answers. The shell's own messages
// (a "Killed" line naming the hook's command line) go to /dev/null: the
// model reads the hook's sentence, or this one. The hook gets no fd 3: the
// watcher it leaves behind (watch.go) would hold Codex's stderr open, and
// Codex waits for it.
const (
	codexFailClosedPrefix = `exec 3>&2 2>/dev/null; `
	codexFailClosedSuffix = ` 2>&3 3>&- || { s=$?; [ "$s" = 2 ] || echo "brabo: the hook ended without an answer (exit $s), so this call is denied" >&3; exit 2; }`
)

// codexHome is the folder of Codex's user configuration.
func codexHome(o InstallOptions) string {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return h
	}
	return filepath.Join(o.Home, ".codex")
}

// codexFiles are the file Codex reads brabo's hooks from and the user's
// config.toml (the same file for a --user installation).
func codexFiles(o InstallOptions) (hooksFile, user string) {
	user = filepath.Join(codexHome(o), "config.toml")
	if o.User {
		return user, user
	}
	return filepath.Join(o.Root, ".codex", "config.toml"), user
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// setBlock replaces brabo's block in the file with block ("" removes it),
// keeping every other line; a missing file is created.
func setBlock(path, block string) error {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	text := string(b)
	if i := strings.Index(text, codexBegin); i >= 0 {
		j := strings.Index(text[i:], codexEnd)
		if j < 0 {
			return fmt.Errorf("%s: brabo's block has no end line %q; fix the file and run brabo install again", path, codexEnd)
		}
		end := i + j + len(codexEnd)
		if end < len(text) && text[end] == '\n' {
			end++
		}
		text = text[:i] + text[end:]
	}
	if block != "" {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += codexBegin + "\n" + block + codexEnd + "\n"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return writeAtomic(path, []byte(text), mode)
}

// installCodex writes (cmd nil: removes) Codex's hooks and their trust.
func installCodex(ctx context.Context, o InstallOptions, cmd func(string) string, timeout time.Duration) error {
	hooksFile, user := codexFiles(o)
	if cmd == nil {
		for _, f := range []string{hooksFile, user} {
			if _, err := os.Stat(f); err == nil {
				if err := setBlock(f, ""); err != nil {
					return err
				}
				fmt.Fprintf(o.Out, "removed brabo's block from %s\n", f)
			}
		}
		return nil
	}
	var hooks strings.Builder
	for _, ev := range []struct{ table, name string }{{"PreToolUse", "pre-tool-use"}, {"PermissionRequest", "permission-request"}, {"PostToolUse", "post-tool-use"}} {
		c := cmd(ev.name)
		if ev.name != "post-tool-use" {
			c = codexFailClosedPrefix + c + codexFailClosedSuffix
		}
		fmt.Fprintf(&hooks, "[[hooks.%s]]\nmatcher = \"*\"\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %s\ntimeout = %d\n\n",
			ev.table, ev.table, tomlString(c), int(timeout/time.Second))
	}
	trust := ""
	if !o.User {
		if projectTrusted(user, o.Root) {
			trust = "" // the user trusts it already, in a line of their own
		} else {
			trust = fmt.Sprintf("[projects.%s]\ntrust_level = \"trusted\"\n\n", tomlString(o.Root))
		}
	}
	if o.User {
		if err := setBlock(user, hooks.String()); err != nil {
			return err
		}
	} else {
		if err := setBlock(hooksFile, hooks.String()); err != nil {
			return err
		}
		if err := setBlock(user, trust); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.Out, "wrote %s: PreToolUse, PermissionRequest and PostToolUse run brabo's hook (timeout %s); a missing or killed hook blocks the call (Codex 0.171.0 has no setting for that: the hook's shell does it)\n", hooksFile, timeout)
	// Trust: ask Codex for the hash of each hook it now sees, and record it.
	listed, err := codexHooks(ctx, o)
	if err != nil {
		return fmt.Errorf("recording the hooks' trust (Codex skips an untrusted hook): %w; run brabo install codex --codex <path of codex>, or trust the hooks in codex's /hooks", err)
	}
	var state strings.Builder
	n := 0
	for _, h := range listed {
		if isOurs(h.Command, "codex") && h.Hash != "" {
			fmt.Fprintf(&state, "[hooks.state.%s]\ntrusted_hash = %s\n\n", tomlString(h.Key), tomlString(h.Hash))
			n++
		}
	}
	if n != 3 {
		return fmt.Errorf("codex app-server lists %d of brabo's 3 hooks for %s: the hooks would not run", n, o.Root)
	}
	if o.User {
		err = setBlock(user, hooks.String()+state.String())
	} else {
		err = setBlock(user, trust+state.String())
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "wrote %s: Codex trusts brabo's 3 hooks (their hashes from codex app-server)%s\n", user,
		map[bool]string{true: "", false: " and the project folder " + o.Root}[o.User || trust == ""])
	return nil
}

// projectTrusted reports whether the user's config.toml already has a
// table for the folder, outside brabo's block (writing a second one would
// make the file invalid).
func projectTrusted(user, root string) bool {
	b, err := os.ReadFile(user)
	if err != nil {
		return false
	}
	text := string(b)
	if i := strings.Index(text, codexBegin); i >= 0 {
		if j := strings.Index(text[i:], codexEnd); j >= 0 {
			text = text[:i] + text[i+j+len(codexEnd):]
		}
	}
	return strings.Contains(text, "[projects."+tomlString(root)+"]")
}

// codexHook is one hook as codex app-server's hooks/list reports it.
type codexHook struct {
	Key     string `json:"key"`
	Command string `json:"command"`
	Hash    string `json:"currentHash"`
}

// codexHooks asks `codex app-server` (JSON-RPC on stdio) for the hooks it
// sees in the project folder, with their keys and hashes.
func codexHooks(ctx context.Context, o InstallOptions) ([]codexHook, error) {
	bin, err := codexBinary(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Dir = o.Root
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	cwds, _ := json.Marshal([]string{o.Root})
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"brabo-install","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{"cwds":` + string(cwds) + `}}`,
	} {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			return nil, err
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks []codexHook `json:"hooks"`
				} `json:"data"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID != 2 {
			continue
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("codex app-server: %s", msg.Error.Message)
		}
		var out []codexHook
		for _, d := range msg.Result.Data {
			out = append(out, d.Hooks...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("codex app-server ended without listing the hooks: %v", sc.Err())
}
