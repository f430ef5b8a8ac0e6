package e2e

// The cost of a hook's process (docs/PERFORMANCE.md, "Performance of the
// hooks"): every tool call of Claude Code, Codex or Gemini CLI starts one.
// These benchmarks start the real binaries, one process per iteration,
// and report the median beside the mean:
//
//	go test ./cmd/brabo -run '^$' -bench 'Start|Hook|Check' -benchtime 200x
//
// docs/PERFORMANCE.md ("Performance of the hooks") has the numbers.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/brabo-dev/brabo/agenthook"
	"github.com/brabo-dev/brabo/internal/agenttest"
)

// runEach runs the command b.N times (stdin fed each time) and reports
// the median besides Go's mean; an exit code other than want fails.
func runEach(b *testing.B, want int, stdin []byte, env []string, name string, args ...string) {
	b.Helper()
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		times = append(times, time.Since(start))
		if code := cmd.ProcessState.ExitCode(); code != want {
			b.Fatalf("%s %v: exit %d (want %d): %v\n%s", filepath.Base(name), args, code, want, err, out.String())
		}
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "ms-p90")
}

// helloBinary builds a hello-world Go program: what starting any Go
// process costs on this machine.
func helloBinary(b *testing.B) string {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644)
	cmd := exec.Command("go", "build", "-o", "hello", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build hello: %v\n%s", err, out)
	}
	return filepath.Join(dir, "hello")
}

func BenchmarkStartHelloWorld(b *testing.B) {
	runEach(b, 0, nil, nil, helloBinary(b))
}

// hookBench starts brabo serve with an allow rule and writes a hook
// configuration for a hook agent; it returns the configuration and the
// PreToolUse input of an auto-approved Bash call.
func hookBench(b *testing.B) (cfgPath string, input []byte) {
	base := b.TempDir()
	root := filepath.Join(base, "proj")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "permissions.json"), []byte(`{"allow": ["Bash(echo:*)"]}`), 0o644)
	srv := startServe(b, filepath.Join(base, "data"))
	p := srv.must(b, "POST", "/v1/projects", srv.token, map[string]any{"slug": "bench", "mode": "local", "root": root}, 201)
	ag := srv.must(b, "POST", "/v1/projects/"+p["id"].(string)+"/agents", srv.token, map[string]any{"name": "claude", "kind": "hook"}, 201)
	cfg := agenthook.Config{Server: srv.url, Agent: "claude", WaitSeconds: 60,
		Projects: []agenthook.ProjectConfig{{ID: p["id"].(string), Root: root, Token: ag["token"].(string)}}}
	raw, _ := json.Marshal(cfg)
	cfgPath = filepath.Join(base, "claude.json")
	os.WriteFile(cfgPath, raw, 0o600)
	input, _ = json.Marshal(map[string]any{"session_id": "s", "cwd": root, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "echo hello"}, "tool_use_id": "toolu_1"})
	return cfgPath, input
}

// BenchmarkHookAutoApproved is the round trip of an auto-approved Bash
// call through the slim brabo-hook: start, read, propose to a local
// brabo serve (which decides and records it), answer.
func BenchmarkHookAutoApproved(b *testing.B) {
	cfg, input := hookBench(b)
	env := []string{"HOME=" + b.TempDir(), "SHELL=/bin/bash", "TMPDIR=" + b.TempDir()}
	runEach(b, 0, input, env, filepath.Join(filepath.Dir(braboBin), "brabo-hook"), "claude", "pre-tool-use", "--config", cfg)
}

// BenchmarkBraboHookAutoApproved is the same through `brabo hook`, the
// whole binary.
func BenchmarkBraboHookAutoApproved(b *testing.B) {
	cfg, input := hookBench(b)
	env := []string{"HOME=" + b.TempDir(), "SHELL=/bin/bash", "TMPDIR=" + b.TempDir()}
	runEach(b, 0, input, env, braboBin, "hook", "claude", "pre-tool-use", "--config", cfg)
}

// twentyRules are the same 20 rules for brabo check and for codex
// execpolicy check.
var twentyRules = [][]string{
	{"git", "status"}, {"git", "diff"}, {"git", "log"}, {"ls"}, {"cat"}, {"grep"}, {"pnpm", "test"}, {"pnpm", "lint"},
	{"npm", "test"}, {"npm", "run"}, {"go", "test"}, {"go", "build"}, {"go", "vet"}, {"cargo", "test"},
	{"cargo", "build"}, {"make", "test"}, {"pytest"}, {"head"}, {"tail"}, {"wc"},
}

// checkRulesDir writes a permissions.json of the 20 rules as allow
// patterns and returns its folder, for brabo check --root.
func checkRulesDir(b *testing.B) string {
	dir := b.TempDir()
	var allow []string
	for _, r := range twentyRules {
		allow = append(allow, "Terminal("+strings.Join(r, " ")+")")
	}
	raw, _ := json.Marshal(map[string]any{"allow": allow})
	os.WriteFile(filepath.Join(dir, "permissions.json"), raw, 0o644)
	return dir
}

// codexRules writes the 20 rules as Codex prefix_rules; it returns the
// file and the environment Codex runs with (its home in a fresh folder).
func codexRules(b *testing.B) (path string, env []string) {
	dir := b.TempDir()
	var rules bytes.Buffer
	for _, r := range twentyRules {
		pat, _ := json.Marshal(r)
		rules.WriteString("prefix_rule(pattern=" + string(pat) + `, decision="allow")` + "\n")
	}
	path = filepath.Join(dir, "bench.rules")
	os.WriteFile(path, rules.Bytes(), 0o644)
	return path, []string{"HOME=" + dir, "CODEX_HOME=" + dir}
}

func BenchmarkCheck20Rules(b *testing.B) {
	runEach(b, 0, nil, nil, braboBin, "check", "--root", checkRulesDir(b), "--", "go test ./...")
}

// BenchmarkCodexExecpolicy20Rules is codex execpolicy check on the same
// rules through the npm package's Node wrapper, as a user's shell runs
// it; it is skipped when Codex is not installed.
func BenchmarkCodexExecpolicy20Rules(b *testing.B) {
	codex := agenttest.CLI(b, "codex")
	path, env := codexRules(b)
	runEach(b, 0, nil, env, codex, "execpolicy", "check", "--rules", path, "go", "test", "./...")
}

// nativeCodex returns the Codex binary the npm package's Node wrapper
// starts (@openai/codex-<platform>/vendor/<target>/bin/codex), so that
// the comparison is with Codex's checker and not with Node's start.
func nativeCodex(b testing.TB) string {
	agenttest.CLI(b, "codex") // skips, or fails under BRABO_REQUIRE_AGENT_CLIS=1, when Codex is missing
	for _, pattern := range []string{"@openai/codex-*/vendor/*/bin/codex", "@openai/codex/vendor/*/bin/codex",
		"@openai/codex/node_modules/@openai/codex-*/vendor/*/bin/codex"} {
		m, _ := filepath.Glob(filepath.Join(agenttest.CLIDir(), "node_modules", pattern))
		if len(m) > 0 {
			return m[0]
		}
	}
	if os.Getenv("BRABO_REQUIRE_AGENT_CLIS") == "1" {
		b.Fatalf("the npm package @openai/codex in %s holds no native binary under vendor/", agenttest.CLIDir())
	}
	b.Skipf("no native Codex binary under %s (BRABO_REQUIRE_AGENT_CLIS=1 fails this)", agenttest.CLIDir())
	return ""
}

// BenchmarkCodexNativeExecpolicy20Rules is the native codex execpolicy
// check on the same rules, without the Node wrapper.
func BenchmarkCodexNativeExecpolicy20Rules(b *testing.B) {
	codex := nativeCodex(b)
	path, env := codexRules(b)
	runEach(b, 0, nil, env, codex, "execpolicy", "check", "--rules", path, "go", "test", "./...")
}

// BenchmarkStartSideBySide runs, in each iteration, a hello-world Go
// binary, brabo-hook's start (its help), the slim brabo-check on the 20
// rules, the native codex execpolicy check on the same rules and `brabo
// check` in the full binary, one after the other, so that the machine's
// load falls on all alike. It reports each median (wall clock, and CPU
// time: user + system, which the load moves less) and the two ratios the
// targets are stated in (docs/PERFORMANCE.md), for the slim checker:
// check/hook (≤ 1.5) and codex/check (≥ 3); and full/slim, what the
// server's dependencies cost the full binary's start.
//
//	go test ./cmd/brabo -run '^$' -bench StartSideBySide -benchtime 300x
func BenchmarkStartSideBySide(b *testing.B) {
	codex := nativeCodex(b)
	rules, codexEnv := codexRules(b)
	root := checkRulesDir(b)
	hook := filepath.Join(filepath.Dir(braboBin), "brabo-hook")
	slimCheck := filepath.Join(filepath.Dir(braboBin), "brabo-check")
	runs := []struct {
		name string
		env  []string
		argv []string
	}{
		{"hello", nil, []string{helloBinary(b)}},
		{"hook", nil, []string{hook, "--help"}},
		{"check", nil, []string{slimCheck, "--root", root, "--", "go test ./..."}},
		{"codex", codexEnv, []string{codex, "execpolicy", "check", "--rules", rules, "go", "test", "./..."}},
		{"brabo-check", nil, []string{braboBin, "check", "--root", root, "--", "go test ./..."}},
	}
	times := make([][]time.Duration, len(runs))
	cpu := make([][]time.Duration, len(runs)) // user + system: what the load moves less
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, r := range runs {
			cmd := exec.Command(r.argv[0], r.argv[1:]...)
			cmd.Env = r.env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			times[j] = append(times[j], time.Since(start))
			if err == nil {
				cpu[j] = append(cpu[j], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			}
			if err != nil {
				b.Fatalf("%s: %v\n%s", r.name, err, out.String())
			}
		}
	}
	b.StopTimer()
	mid := func(d []time.Duration) float64 {
		sort.Slice(d, func(x, y int) bool { return d[x] < d[y] })
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	median, cpuMedian := make([]float64, len(runs)), make([]float64, len(runs))
	for j, r := range runs {
		median[j], cpuMedian[j] = mid(times[j]), mid(cpu[j])
		b.ReportMetric(median[j], "ms-"+r.name)
		b.ReportMetric(cpuMedian[j], "cpu-ms-"+r.name)
	}
	b.ReportMetric(median[2]/median[1], "check/hook")
	b.ReportMetric(median[3]/median[2], "codex/check")
	b.ReportMetric(median[4]/median[2], "full/slim")
}
