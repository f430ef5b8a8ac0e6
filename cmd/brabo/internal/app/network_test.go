package app

import (
	"fmt"
	"testing"
)

func TestOwnAddrs(t *testing.T) {
	for _, c := range []struct{ api, db, want string }{
		{"127.0.0.1:8080", "", "[127.0.0.1:8080]"},
		{"127.0.0.1:8080", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "[127.0.0.1:8080 127.0.0.1:5432]"},
		{":8080", "postgres://u@db.internal/x", "[:8080 db.internal:5432]"},
		{"127.0.0.1:8080", "postgresql://u@h1:5433,h2/x", "[127.0.0.1:8080 h1:5433 h2:5432]"},
		{"127.0.0.1:8080", "postgres:///x", "[127.0.0.1:8080 localhost:5432]"},
	} {
		if got := fmt.Sprint(ownAddrs(c.api, c.db)); got != c.want {
			t.Errorf("ownAddrs(%q, %q) = %s, want %s", c.api, c.db, got, c.want)
		}
	}
}
