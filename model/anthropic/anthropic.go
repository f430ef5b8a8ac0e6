// Package anthropic is a model.Model over Anthropic's Messages API,
// through the official SDK (github.com/anthropics/anthropic-sdk-go/v2)
// (DESIGN §7.6).
//
// Only cmd/brabo imports this package: the SDK is heavy to compile, and
// the rest of brabo talks to models through the model.Model interface.
//
// # Configuration
//
// Everything comes from Config; the SDK's environment defaults
// (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_PROFILE, credential
// files…) are turned off with option.WithoutEnvironmentDefaults, so what
// brabo runs against is what its configuration says. The SDK sends the
// API version it was built for (its anthropic-version header) and, for
// that version, the API key as "Authorization: Bearer …".
//
// # Retries and timeouts
//
// The SDK does not retry unless Config.MaxRetries says so: Complete makes
// one request and reports a failure as a *model.Error whose Retryable
// field says whether trying again may help (429 rate limits, 529
// overloaded, other 5xx, 408/409, transport errors). The caller — the tool
// loop — owns the retry policy, and tests stay fast. Each request is
// bounded by Config.RequestTimeout (10 minutes by default); giving the
// SDK a timeout also stops it from refusing large max_tokens values
// without streaming.
//
// # Mapping
//
// Request.System is the system prompt. User text, assistant text and
// tool calls (tool_use blocks with their input object) map to user and
// assistant messages; tool results become tool_result blocks, with
// is_error from Message.IsError. The API wants the results of one
// assistant turn in ONE user message, first: consecutive tool results,
// and any user text right after them, are grouped into one user message.
// Empty text is left out (the API refuses empty text blocks), and a
// message left with nothing is dropped. Tools carry Tool.Parameters as
// their input_schema. max_tokens is required by the API: Request.MaxTokens,
// else Config.MaxTokens, else DefaultMaxTokens.
//
// In the answer, text blocks are joined by newlines into the content,
// tool_use blocks become tool calls with their raw input, and thinking
// blocks are dropped. stop_reason "tool_use" is model.StopToolCalls,
// "max_tokens" and "model_context_window_exceeded" are
// model.StopMaxTokens, the rest ("end_turn", "stop_sequence", "refusal",
// "pause_turn") model.StopEnd. Usage.InputTokens counts the cached input
// too (input_tokens + cache_creation_input_tokens + cache_read_input_tokens).
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/brabo-dev/brabo/internal/modelhttp"
	"github.com/brabo-dev/brabo/model"
)

// Defaults.
const (
	DefaultBaseURL        = "https://api.anthropic.com/"
	DefaultMaxTokens      = 4096
	DefaultRequestTimeout = 10 * time.Minute
)

// Provider is the name *model.Error carries.
const Provider = "anthropic"

// Config says which server and model to use.
type Config struct {
	// BaseURL of the API, without the /v1 ("https://api.anthropic.com").
	// Empty means DefaultBaseURL.
	BaseURL string
	// APIKey authenticates the requests; empty sends no credentials.
	APIKey string
	// Model is the model name ("claude-sonnet-4-5"). Required.
	Model string
	// MaxTokens bounds each answer when the Request does not say; 0 means
	// DefaultMaxTokens.
	MaxTokens int
	// HTTPClient makes the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// RequestTimeout bounds one request; 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MaxRetries is how many times the SDK itself retries a failed request
	// (see the package documentation); 0, the default, means never.
	MaxRetries int
	// Options are more SDK request options (extra headers, beta flags),
	// applied last.
	Options []option.RequestOption
}

// Model completes conversations through the Messages API. It is safe for
// concurrent use.
type Model struct {
	cfg      Config
	messages anthropic.MessageService
}

var _ model.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("anthropic: no model name")
	}
	if cfg.MaxTokens < 0 || cfg.MaxRetries < 0 || cfg.RequestTimeout < 0 {
		return nil, errors.New("anthropic: MaxTokens, MaxRetries and RequestTimeout cannot be negative")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(cfg.BaseURL),
		option.WithMaxRetries(cfg.MaxRetries),
		option.WithRequestTimeout(cfg.RequestTimeout),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	opts = append(opts, cfg.Options...)
	client := anthropic.NewClient(opts...)
	return &Model{cfg: cfg, messages: client.Messages}, nil
}

// Complete sends req as one Messages API request.
func (m *Model) Complete(ctx context.Context, req model.Request) (*model.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	var httpResp *http.Response
	res, err := m.messages.New(ctx, params, option.WithResponseInto(&httpResp))
	if err != nil {
		return nil, failure(ctx, err, httpResp)
	}
	return response(res), nil
}

// params maps a model.Request to the SDK's request.
func (m *Model) params(req model.Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: m.cfg.Model, MaxTokens: int64(m.cfg.MaxTokens)}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}

	// user collects the blocks of the user message being built, so tool
	// results and the text after them go out as one message.
	var user []anthropic.ContentBlockParamUnion
	flush := func() {
		if len(user) > 0 {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(user...))
			user = nil
		}
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case model.User:
			if msg.Content != "" {
				user = append(user, anthropic.NewTextBlock(msg.Content))
			}
		case model.ToolResult:
			if msg.ToolCallID == "" {
				return p, fmt.Errorf("anthropic: message %d is a tool result without a tool call id", i)
			}
			r := anthropic.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
			if msg.Content != "" {
				r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: msg.Content}}}
			}
			if msg.IsError {
				r.IsError = anthropic.Bool(true)
			}
			user = append(user, anthropic.ContentBlockParamUnion{OfToolResult: &r})
		case model.Assistant:
			flush()
			var blocks []anthropic.ContentBlockParamUnion
			if msg.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Content))
			}
			for _, c := range msg.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input(c.Arguments), c.Name))
			}
			if len(blocks) > 0 {
				p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
			}
		default:
			return p, fmt.Errorf("anthropic: message %d has an unknown role %q", i, msg.Role)
		}
	}
	flush()

	for _, t := range req.Tools {
		schema, err := inputSchema(t.Parameters)
		if err != nil {
			return p, fmt.Errorf("anthropic: tool %s: %w", t.Name, err)
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return p, nil
}

// input is a tool call's arguments as the API wants them: a JSON object,
// sent as written. Anything else (arguments another provider kept as a
// string because they were not JSON) goes as an empty object.
func input(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return json.RawMessage("{}")
	}
	return raw
}

// inputSchema carries a tool's JSON Schema as written: each top-level
// value stays raw JSON.
func inputSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	if len(bytes.TrimSpace(raw)) == 0 {
		s.Properties = map[string]any{}
		return s, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return s, fmt.Errorf("parameters are not a JSON Schema object: %s", modelhttp.Abbreviate(string(raw), 200))
	}
	for k, v := range fields {
		switch k {
		case "type":
			// Always "object" for an input_schema; the SDK writes it.
			var typ string
			if json.Unmarshal(v, &typ) != nil || typ != "object" {
				return s, fmt.Errorf(`parameters must have "type": "object", not %s`, v)
			}
		case "properties":
			s.Properties = v
		case "required":
			if err := json.Unmarshal(v, &s.Required); err != nil {
				return s, fmt.Errorf(`"required" is not a list of names: %s`, v)
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}

// response maps an answer.
func response(res *anthropic.Message) *model.Response {
	msg := model.Message{Role: model.Assistant}
	var texts []string
	for _, b := range res.Content {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_use":
			args := bytes.TrimSpace(b.Input)
			if len(args) == 0 || string(args) == "null" {
				args = []byte("{}")
			}
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: b.ID, Name: b.Name, Arguments: bytes.Clone(args)})
		}
	}
	msg.Content = strings.Join(texts, "\n")

	stop := model.StopEnd
	switch res.StopReason {
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		stop = model.StopMaxTokens
	case anthropic.StopReasonToolUse:
		stop = model.StopToolCalls
	default:
		if len(msg.ToolCalls) > 0 {
			stop = model.StopToolCalls
		}
	}
	u := res.Usage
	return &model.Response{
		Message:    msg,
		StopReason: stop,
		Usage: model.Usage{
			InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
			OutputTokens: int(u.OutputTokens),
		},
	}
}

// failure maps an SDK error to a *model.Error, or to the context's error
// when the caller gave up.
func failure(ctx context.Context, err error, httpResp *http.Response) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("anthropic: %w", ctxErr)
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = modelhttp.Abbreviate(strings.TrimSpace(apiErr.RawJSON()), 500)
		}
		if msg == "" {
			msg = modelhttp.BodyText(apiErr.Response)
		}
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		if t := string(apiErr.Type()); t != "" {
			msg += " (" + t + ")"
		}
		return &model.Error{Provider: Provider, Status: apiErr.StatusCode, Retryable: model.RetryableStatus(apiErr.StatusCode), Message: msg}
	}
	return modelhttp.UnreadError(Provider, httpResp, err)
}
