package agenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// OpenAIResponses serves the OpenAI Responses API with streaming, as Codex
// calls it through a model_providers entry (wire_api = "responses"):
// POST /v1/responses answers, as Server-Sent Events, with the script's next
// function_call, or with a text message once it is spent.
func OpenAIResponses(t testing.TB, script ...Call) *Server {
	s := &Server{script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.record(body)
		var req struct {
			Model string           `json:"model"`
			Input []map[string]any `json:"input"`
		}
		json.Unmarshal(body, &req)
		done := 0
		for _, item := range req.Input {
			if item["type"] == "function_call_output" || item["type"] == "custom_tool_call_output" {
				done++
			}
		}
		call, ok := s.step(done)
		n := len(s.Requests())
		respID := fmt.Sprintf("resp_%d", n)
		var item map[string]any
		switch {
		case ok && call.Input["freeform"] != nil:
			// A freeform ("custom") tool such as Codex's apply_patch: its
			// input is text, not JSON arguments.
			item = map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%d", n), "call_id": fmt.Sprintf("call_%02d", done+1),
				"name": call.Name, "input": call.Input["freeform"], "status": "completed"}
		case ok:
			args, _ := json.Marshal(call.Input)
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": fmt.Sprintf("call_%02d", done+1),
				"name": call.Name, "arguments": string(args), "status": "completed"}
			// An MCP tool, mcp__server__tool: Codex offers it as the tool
			// of a namespace (mcp__server), and the model calls it so.
			if rest, isMcp := strings.CutPrefix(call.Name, "mcp__"); isMcp {
				if server, tool, found := strings.Cut(rest, "__"); found {
					item["namespace"], item["name"] = "mcp__"+server, tool
				}
			}
		default:
			item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": FinalText, "annotations": []any{}}}}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		seq := 0
		ev := func(typ string, data map[string]any) {
			data["type"], data["sequence_number"] = typ, seq
			seq++
			b, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		}
		resp := func(status string, output []any) map[string]any {
			return map[string]any{"id": respID, "object": "response", "created_at": 1, "status": status, "model": req.Model,
				"output": output, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
					"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}
		}
		ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": item})
		ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
		ev("response.completed", map[string]any{"response": resp("completed", []any{item})})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.NotFound(w, r)
	})
	return start(t, s, mux)
}

// FunctionOutputs returns the function_call_output items Codex sent back,
// once each: what the model was told of each call.
func (s *Server) FunctionOutputs() []map[string]any {
	var out []map[string]any
	seen := map[string]bool{}
	for _, raw := range s.Requests() {
		var req struct {
			Input []map[string]any `json:"input"`
		}
		json.Unmarshal(raw, &req)
		for _, item := range req.Input {
			if item["type"] == "function_call_output" || item["type"] == "custom_tool_call_output" {
				id, _ := item["call_id"].(string)
				if !seen[id] {
					seen[id] = true
					out = append(out, item)
				}
			}
		}
	}
	return out
}
