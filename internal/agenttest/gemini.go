package agenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Gemini serves the Gemini API as Gemini CLI calls it through
// GOOGLE_GEMINI_BASE_URL: POST …:streamGenerateContent?alt=sse answers
// with the script's next functionCall part, or with text once it is spent;
// …:generateContent (the CLI's side calls) gets text, or the JSON its
// schema asks for when it asks for one.
func Gemini(t testing.TB, script ...Call) *Server {
	s := &Server{script: script}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.record(body)
		var req struct {
			Contents []struct {
				Role  string           `json:"role"`
				Parts []map[string]any `json:"parts"`
			} `json:"contents"`
			Tools            []any          `json:"tools"`
			GenerationConfig map[string]any `json:"generationConfig"`
		}
		json.Unmarshal(body, &req)
		switch {
		case strings.HasSuffix(r.URL.Path, ":countTokens"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"totalTokens": 10}`)
			return
		case strings.HasSuffix(r.URL.Path, ":generateContent"):
			text := FinalText
			if req.GenerationConfig["responseMimeType"] == "application/json" {
				text = `{"next_speaker": "user", "reasoning": "done", "model_choice": "flash", "complexity_reasoning": "simple", "complexity_score": 1}`
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(candidate(map[string]any{"text": text}))
			return
		case !strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
			http.NotFound(w, r)
			return
		}
		done := 0
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if _, ok := p["functionResponse"]; ok {
					done++
				}
			}
		}
		part := map[string]any{"text": FinalText}
		if call, ok := s.step(done); ok && len(req.Tools) > 0 {
			part = map[string]any{"functionCall": map[string]any{"name": call.Name, "args": call.Input}}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		b, _ := json.Marshal(candidate(part))
		fmt.Fprintf(w, "data: %s\n\n", b)
	})
	return start(t, s, h)
}

func candidate(part map[string]any) map[string]any {
	return map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-test",
	}
}

// FunctionResponses returns the functionResponse parts Gemini CLI sent
// back, once each (by call name and order): what the model was told.
func (s *Server) FunctionResponses() []map[string]any {
	var longest []map[string]any
	for _, raw := range s.Requests() {
		var req struct {
			Contents []struct {
				Parts []map[string]any `json:"parts"`
			} `json:"contents"`
		}
		json.Unmarshal(raw, &req)
		var out []map[string]any
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if fr, ok := p["functionResponse"].(map[string]any); ok {
					out = append(out, fr)
				}
			}
		}
		if len(out) > len(longest) {
			longest = out
		}
	}
	return longest
}
