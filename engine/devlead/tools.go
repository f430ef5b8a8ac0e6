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
type PlanArgs = brabo.ExecutionPlan

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
			extra, _ := json.Marshal(a)
			if _, err := brabo.ParseExecutionPlan(extra); err != nil {
				return "", brabo.Payload{}, err
			}
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

// RunAssessment is the executor runner of assess_implementability:
// executing one records the decision, nothing runs, and the result says
// what was approved. The wiring registers it (executor.Register), with
// Starter's runners of propose_execution_plan, parallelize and
// raise_max_parallel; an agent package never imports an adapter.

// RunAssessment executes an approved assess_implementability.
func RunAssessment(_ context.Context, req brabo.ExecRequest) (*brabo.Result, error) {
	var a AssessArgs
	if err := json.Unmarshal(req.Action.Payload.Extra, &a); err != nil {
		return nil, fmt.Errorf("assess_implementability: unreadable assessment: %v", err)
	}
	return &brabo.Result{Output: "the implementability assessment was approved: " + a.Verdict}, nil
}
