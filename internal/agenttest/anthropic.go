package agenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Anthropic serves the Anthropic Messages API with streaming, as Claude
// Code calls it through ANTHROPIC_BASE_URL: POST /v1/messages answers with
// the script's next tool_use block, or with text once it is spent.
// Requests without tools (Claude Code's side calls: titles, summaries) are
// answered with text and do not move the script.
func Anthropic(t testing.TB, script ...Call) *Server {
	s := &Server{script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.record(body)
		var req struct {
			Model    string `json:"model"`
			Stream   bool   `json:"stream"`
			Tools    []any  `json:"tools"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(body, &req)
		done := 0
		for _, m := range req.Messages {
			var blocks []struct {
				Type string `json:"type"`
			}
			json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				if b.Type == "tool_result" {
					done++
				}
			}
		}
		call, ok := s.step(done)
		if len(req.Tools) == 0 {
			ok = false
		}
		var block map[string]any
		var input string
		stop := "end_turn"
		if ok {
			in, _ := json.Marshal(call.Input)
			input = string(in)
			block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d", done+1), "name": call.Name, "input": map[string]any{}}
			stop = "tool_use"
		} else {
			block = map[string]any{"type": "text", "text": ""}
		}
		msg := map[string]any{"id": fmt.Sprintf("msg_%d", len(s.Requests())), "type": "message", "role": "assistant",
			"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}
		if !req.Stream {
			content := []any{map[string]any{"type": "text", "text": FinalText}}
			if ok {
				block["input"] = call.Input
				content = []any{block}
			}
			msg["content"], msg["stop_reason"] = content, stop
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(msg)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		ev := func(name string, data any) {
			b, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		}
		ev("message_start", map[string]any{"type": "message_start", "message": msg})
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
		if ok {
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": input}})
		} else {
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": FinalText}})
		}
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 5}})
		ev("message_stop", map[string]any{"type": "message_stop"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// Anything else Claude Code asks (token counts, feature flags) gets
		// an empty success: the test is about the tool loop.
		io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"input_tokens": 10}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{}`)
	})
	return start(t, s, mux)
}

// ToolResults returns the tool_result blocks Claude Code sent back, in the
// order of the requests: what the model was told of each call.
func (s *Server) ToolResults() []map[string]any {
	var out []map[string]any
	seen := map[string]bool{}
	for _, raw := range s.Requests() {
		var req struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(raw, &req)
		for _, m := range req.Messages {
			var blocks []map[string]any
			json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				if b["type"] == "tool_result" {
					id, _ := b["tool_use_id"].(string)
					if !seen[id] {
						seen[id] = true
						out = append(out, b)
					}
				}
			}
		}
	}
	return out
}
