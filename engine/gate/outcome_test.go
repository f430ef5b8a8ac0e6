package gate

import (
	"testing"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/engine/toolloop"
)

func TestFromLoopNamesEveryOutcome(t *testing.T) {
	c := toolloop.Ctx{Version: toolloop.CtxVersion, AwaitingActionID: "act_1"}
	if o, ok := fromLoop(toolloop.AwaitingApproval{ActionID: "act_1", ToolCallID: "c1", ToolName: "terminal", Ctx: c}).(Awaiting); !ok ||
		o.ActionID != "act_1" || o.ToolCallID != "c1" || !o.Ctx.Awaits("act_1") {
		t.Fatalf("AwaitingApproval became %#v", o)
	}
	if o := fromLoop(toolloop.Done{Final: "PASS"}); o != (Ok{Verdict: "PASS"}) {
		t.Fatalf("Done became %#v", o)
	}
	if o := fromLoop(toolloop.Halted{Why: "model: down", Origin: brabo.OriginModel}); o != (Blocked{Info: "model: down", Origin: brabo.OriginModel}) {
		t.Fatalf("Halted became %#v", o)
	}
	// The catch-all names its origin (a defect of this build), never infra.
	if o, ok := fromLoop(nil).(Blocked); !ok || o.Origin != brabo.OriginCode {
		t.Fatalf("an unexpected outcome became %#v", o)
	}
}
