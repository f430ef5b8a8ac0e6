// Package confinetest lets a test that needs Landlock say so: it skips the
// test where the kernel has no Landlock, and fails it instead when
// BRABO_REQUIRE_LANDLOCK=1 (.ci/run sets it), so CI never passes a
// confinement test it did not run.
package confinetest

import (
	"os"
	"testing"

	"github.com/brabo-dev/brabo/internal/confine"
)

// RequireVar is the variable that turns a missing Landlock from a skip
// into a failure.
const RequireVar = "BRABO_REQUIRE_LANDLOCK"

// Require returns the kernel's Landlock ABI version. Where Landlock is
// missing or off it fails the test when BRABO_REQUIRE_LANDLOCK=1, and
// skips it otherwise.
func Require(t testing.TB) int {
	t.Helper()
	abi, err := confine.ABI()
	if err == nil {
		return abi
	}
	if os.Getenv(RequireVar) == "1" {
		t.Fatalf("the test needs Landlock (a kernel with CONFIG_SECURITY_LANDLOCK, landlock in lsm=), and BRABO_REQUIRE_LANDLOCK=1: %v", err)
	}
	t.Skipf("BRABO_REQUIRE_LANDLOCK=1 fails this instead: %v", err)
	return 0
}
