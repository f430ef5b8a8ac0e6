// Package openai is a model.Model over the OpenAI Chat Completions API,
// through the official SDK (github.com/openai/openai-go/v3). Any server
// that speaks that API works: OpenAI itself, or a local or self-hosted one
// (vLLM, llama.cpp, Ollama, LM Studio…) given its base URL (DESIGN §7.6).
//
// Only cmd/brabo imports this package: the SDK is heavy to compile, and
// the rest of brabo talks to models through the model.Model interface.
//
// # Configuration
//
// Everything comes from Config; the SDK's own environment variables
// (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, …) are deliberately not
// read, so what brabo runs against is what its configuration says and
// nothing else. cmd/brabo decides which of its settings become Config.
//
// # Retries
//
// The SDK retries by default (twice, with backoff, up to minutes when a
// server asks for it). Here it does not retry unless Config.MaxRetries says
// so: Complete makes one request and reports a failure as a *model.Error
// whose Retryable field says whether trying again may help (rate limits,
// overload, 5xx, 408/409, transport errors). The caller — the tool loop —
// owns the retry policy, which keeps it in one place and keeps tests fast.
//
// # Mapping
//
// Request.System becomes a "system" message; user and assistant messages
// map one to one, an assistant's tool calls become "tool_calls" of type
// "function" with their arguments as a JSON string; a tool result becomes
// a "tool" message with its "tool_call_id". Chat Completions has no error
// flag on a tool message, so Message.IsError is not sent: the content of
// the result is what tells the model. Tools become function tools with
// Tool.Parameters as their JSON Schema.
//
// In the answer, finish_reason "tool_calls" (or any answer that carries
// tool calls, as some compatible servers say "stop" there) is
// model.StopToolCalls, "length" is model.StopMaxTokens, anything else is
// model.StopEnd. Tool call arguments are kept as the raw JSON the model
// produced; arguments that are not valid JSON are kept as a JSON string
// holding the text, so the conversation still serialises and the tool
// reports the bad arguments to the model (and they are sent back as they
// came).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/brabo-dev/brabo/internal/modelhttp"
	"github.com/brabo-dev/brabo/model"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Provider is the name *model.Error carries.
const Provider = "openai"

// Config says which server and model to use.
type Config struct {
	// BaseURL of the API, with its version path ("http://localhost:8000/v1").
	// Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer …"; empty sends no
	// Authorization header (local servers often need none).
	APIKey string
	// Model is the model name ("gpt-4.1", "qwen2.5-coder:32b"). Required.
	Model string
	// MaxTokens bounds each answer when the Request does not say; 0 sends
	// no bound and leaves it to the server.
	MaxTokens int
	// LegacyMaxTokens sends the bound as "max_tokens" instead of
	// "max_completion_tokens", for servers that only know the old field.
	// OpenAI's reasoning models refuse "max_tokens".
	LegacyMaxTokens bool
	// HTTPClient makes the requests; nil means the SDK's default client.
	// Set one with a Timeout to bound a request's total time.
	HTTPClient *http.Client
	// MaxRetries is how many times the SDK itself retries a failed request
	// (see the package documentation); 0, the default, means never.
	MaxRetries int
	// Options are more SDK request options (extra headers, an
	// organization), applied last.
	Options []option.RequestOption
}

// Model completes conversations through Chat Completions. It is safe for
// concurrent use.
type Model struct {
	cfg  Config
	chat openai.ChatCompletionService
}

var _ model.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("openai: no model name")
	}
	if cfg.MaxTokens < 0 || cfg.MaxRetries < 0 {
		return nil, errors.New("openai: MaxTokens and MaxRetries cannot be negative")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	opts = append(opts, cfg.Options...)
	// The service, not openai.NewClient: the client would add the SDK's
	// defaults read from OPENAI_* environment variables.
	return &Model{cfg: cfg, chat: openai.NewChatCompletionService(opts...)}, nil
}

// Complete sends req as one chat completion request.
func (m *Model) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var httpResp *http.Response
	res, err := m.chat.New(ctx, params, option.WithResponseInto(&httpResp))
	if err != nil {
		return nil, failure(ctx, err, httpResp)
	}
	if len(res.Choices) == 0 {
		return nil, &model.Error{Provider: Provider, Status: http.StatusOK, Message: "the answer has no choices"}
	}
	return response(res), nil
}

// params maps a model.Request to the SDK's request.
func (m *Model) params(req model.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: m.cfg.Model}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case model.User:
			p.Messages = append(p.Messages, openai.UserMessage(msg.Content))
		case model.Assistant:
			var a openai.ChatCompletionAssistantMessageParam
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = openai.String(msg.Content)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      c.Name,
							Arguments: argumentsText(c.Arguments),
						},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case model.ToolResult:
			if msg.ToolCallID == "" {
				return p, fmt.Errorf("openai: message %d is a tool result without a tool call id", i)
			}
			p.Messages = append(p.Messages, openai.ToolMessage(msg.Content, msg.ToolCallID))
		default:
			return p, fmt.Errorf("openai: message %d has an unknown role %q", i, msg.Role)
		}
	}
	for _, t := range req.Tools {
		fn := openai.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		schema, err := parameters(t.Parameters)
		if err != nil {
			return p, fmt.Errorf("openai: tool %s: %w", t.Name, err)
		}
		fn.Parameters = schema
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = m.cfg.MaxTokens
	}
	if maxTokens > 0 {
		if m.cfg.LegacyMaxTokens {
			p.MaxTokens = openai.Int(int64(maxTokens))
		} else {
			p.MaxCompletionTokens = openai.Int(int64(maxTokens))
		}
	}
	return p, nil
}

// parameters carries a tool's JSON Schema as it is written: each
// top-level value stays raw JSON, so numbers and key order inside are not
// rewritten by a round trip through Go values.
func parameters(raw json.RawMessage) (openai.FunctionParameters, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return openai.FunctionParameters{"type": "object", "properties": map[string]any{}}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("parameters are not a JSON Schema object: %s", modelhttp.Abbreviate(string(raw), 200))
	}
	schema := make(openai.FunctionParameters, len(fields))
	for k, v := range fields {
		schema[k] = v
	}
	return schema, nil
}

// argumentsText is the text of arguments as the API carries them: the JSON
// itself, or the text the model wrote when it was not valid JSON (kept as a
// JSON string, see the package documentation).
func argumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// argumentsJSON is the reverse of argumentsText.
func argumentsJSON(text string) json.RawMessage {
	t := strings.TrimSpace(text)
	if t == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(t)) && t[0] != '"' {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(text)
	return b
}

// response maps the first choice of an answer.
func response(res *openai.ChatCompletion) *model.Response {
	choice := res.Choices[0]
	msg := model.Message{Role: model.Assistant, Content: choice.Message.Content}
	if msg.Content == "" && choice.Message.Refusal != "" {
		msg.Content = choice.Message.Refusal
	}
	for _, c := range choice.Message.ToolCalls {
		tc := model.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: argumentsJSON(c.Function.Arguments)}
		if c.Type == "custom" {
			tc.Name = c.Custom.Name
			b, _ := json.Marshal(c.Custom.Input)
			tc.Arguments = b
		}
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	// The deprecated single function call, from servers that still send it.
	if fc := choice.Message.FunctionCall; len(msg.ToolCalls) == 0 && fc.Name != "" {
		msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{
			ID: "call_" + res.ID, Name: fc.Name, Arguments: argumentsJSON(fc.Arguments),
		})
	}

	stop := model.StopEnd
	switch {
	case choice.FinishReason == "length":
		stop = model.StopMaxTokens
	case len(msg.ToolCalls) > 0:
		stop = model.StopToolCalls
	}
	return &model.Response{
		Message:    msg,
		StopReason: stop,
		Usage: model.Usage{
			InputTokens:  int(res.Usage.PromptTokens),
			OutputTokens: int(res.Usage.CompletionTokens),
		},
	}
}

// failure maps an SDK error to a *model.Error, or to the context's error
// when the caller gave up.
func failure(ctx context.Context, err error, httpResp *http.Response) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("openai: %w", ctxErr)
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = modelhttp.BodyText(apiErr.Response)
		}
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		if apiErr.Code != "" {
			msg += " (" + apiErr.Code + ")"
		}
		// A 429 for an exhausted quota will not pass by waiting.
		retryable := model.RetryableStatus(apiErr.StatusCode) && apiErr.Code != "insufficient_quota"
		return &model.Error{Provider: Provider, Status: apiErr.StatusCode, Retryable: retryable, Message: msg}
	}
	return modelhttp.UnreadError(Provider, httpResp, err)
}
