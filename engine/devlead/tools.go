package devlead

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
	"github.com/brabo-dev/brabo/model"
)

// Tool names the lead's model is given.
const (
	ToolProposeExecutionPlan   = "propose_execution_plan"
	ToolAssessImplementability = "assess_implementability"
)

// PlanArgs are propose_execution_plan's arguments, kept in the action's
// Payload.Extra.
type PlanArgs struct {
	Plan string `json:"plan"`
	// Agents is how many agents per module the plan asks for.
	Agents map[string]int `json:"agents"`
}

// AssessArgs are assess_implementability's arguments, kept in the
// action's Payload.Extra.
type AssessArgs struct {
	Story   string `json:"story"`
	Verdict string `json:"verdict"`
}

func decodeStrict(args json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("the arguments must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the arguments do not fit the schema: %v", err)
	}
	return nil
}

// ProposeExecutionPlanTool is the pipeline tool for the lead's execution
// plan (ADR 0086): how many agents per module, and why.
func ProposeExecutionPlanTool() toolloop.Tool {
	return toolloop.Tool{
		Spec: model.Tool{
			Name: ToolProposeExecutionPlan,
			Description: "Propose the execution plan: how many agents work on each module and why. " +
				"A human decides on it; you get the decision as the result.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"plan":{"type":"string","description":"the plan and its reasons"},` +
				`"agents":{"type":"object","additionalProperties":{"type":"integer","minimum":1},` +
				`"description":"agents per module"}},` +
				`"required":["plan","agents"],"additionalProperties":false}`),
		},
		Kind: toolloop.Pipeline,
		Action: func(args json.RawMessage) (brabo.ActionType, brabo.Payload, error) {
			var a PlanArgs
			if err := decodeStrict(args, &a); err != nil {
				return "", brabo.Payload{}, err
			}
			if strings.TrimSpace(a.Plan) == "" {
				return "", brabo.Payload{}, fmt.Errorf("plan is required")
			}
			if len(a.Agents) == 0 {
				return "", brabo.Payload{}, fmt.Errorf("agents is required: at least one module with its number of agents")
			}
			for mod, n := range a.Agents {
				if n < 1 {
					return "", brabo.Payload{}, fmt.Errorf("agents[%q] must be at least 1", mod)
				}
			}
			extra, _ := json.Marshal(a)
			return brabo.ProposeExecutionPlan, brabo.Payload{Extra: extra}, nil
		},
	}
}

// AssessImplementabilityTool is the pipeline tool for the implementability
// assessment of a story (ADR 0090).
func AssessImplementabilityTool() toolloop.Tool {
	return toolloop.Tool{
		Spec: model.Tool{
			Name: ToolAssessImplementability,
			Description: "Record your assessment of whether a story can be implemented as written. " +
				"A human decides on it; you get the decision as the result.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"story":{"type":"string","description":"the story assessed"},` +
				`"verdict":{"type":"string","description":"the verdict and its reasons"}},` +
				`"required":["story","verdict"],"additionalProperties":false}`),
		},
		Kind: toolloop.Pipeline,
		Action: func(args json.RawMessage) (brabo.ActionType, brabo.Payload, error) {
			var a AssessArgs
			if err := decodeStrict(args, &a); err != nil {
				return "", brabo.Payload{}, err
			}
			if strings.TrimSpace(a.Story) == "" || strings.TrimSpace(a.Verdict) == "" {
				return "", brabo.Payload{}, fmt.Errorf("story and verdict are required")
			}
			extra, _ := json.Marshal(a)
			return brabo.AssessImplementability, brabo.Payload{Extra: extra}, nil
		},
	}
}

// Tools are the lead's pipeline tools.
func Tools() []toolloop.Tool {
	return []toolloop.Tool{ProposeExecutionPlanTool(), AssessImplementabilityTool()}
}

// RunPlan and RunAssessment are the executor runners of the lead's two
// action types: executing one records the decision, nothing runs, and the
// result says what was approved. The wiring registers them
// (executor.Register); without them an approved plan fails with "no
// executor is registered". An agent package never imports an adapter.

// RunPlan executes an approved propose_execution_plan: it records the
// decision, and the result says what was approved.
func RunPlan(_ context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	var a PlanArgs
	if err := json.Unmarshal(req.Action.Payload.Extra, &a); err != nil {
		return nil, fmt.Errorf("propose_execution_plan: unreadable plan: %v", err)
	}
	raw, _ := json.Marshal(a.Agents)
	return &brabo.Result{Output: "the execution plan was approved: " + a.Plan,
		Detail: map[string]string{"agents": string(raw)}}, nil
}

// RunAssessment executes an approved assess_implementability.
func RunAssessment(_ context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	var a AssessArgs
	if err := json.Unmarshal(req.Action.Payload.Extra, &a); err != nil {
		return nil, fmt.Errorf("assess_implementability: unreadable assessment: %v", err)
	}
	return &brabo.Result{Output: "the implementability assessment was approved: " + a.Verdict}, nil
}
