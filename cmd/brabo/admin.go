package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/brabo-dev/brabo"
	"github.com/brabo-dev/brabo/cmd/brabo/internal/app"
)

// adminMore is what brabo admin -h says after the usage.
const adminMore = `  token   issue a new admin token; the old one (and the admin's web
          sessions) stop working. On SQLite it needs the data folder, and
          the server must be stopped first; on PostgreSQL it needs the
          database URL, and running servers drop the old token at once.`

// runAdmin is `brabo admin`: the operator's way back in when the admin
// token printed on the first start is lost.
func runAdmin(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageError(stderr, "admin", "which? the only subcommand is token (brabo admin token)")
	}
	if args[0] != "token" {
		return usageError(stderr, "admin", "unknown subcommand %q: the only one is token", args[0])
	}
	fl := newFlags("admin token")
	var sf storeFlags
	sf.register(fl)
	if code, done := parseNoArgs(fl, args[1:], stdout, stderr); done {
		return code
	}
	if _, err := sf.isSQLite(); err != nil {
		return usageError(stderr, "admin token", "%v", err)
	}
	token, admin, err := adminToken(context.Background(), sf)
	if err != nil {
		return fail(stderr, "admin token", "%v", err)
	}
	fmt.Fprintf(stdout, "A new admin token for %s (%s); the old one and its web sessions no longer work:\n\n    %s\n\nIt is shown once; keep it (export BRABO_TOKEN=%s).\n", admin.Name, admin.ID, token, token)
	return 0
}

// adminToken replaces the oldest admin's token. On SQLite it takes the data
// folder's lock first, so it never runs beside a server holding the file,
// and it refuses a data folder with no database rather than creating one.
func adminToken(ctx context.Context, sf storeFlags) (string, *brabo.Member, error) {
	isSQLite, err := sf.isSQLite()
	if err != nil {
		return "", nil, err
	}
	if isSQLite {
		dir, err := sf.dataDir()
		if err != nil {
			return "", nil, err
		}
		if _, err := os.Stat(filepath.Join(dir, "brabo.db")); err != nil {
			return "", nil, fmt.Errorf("no database in the data folder %s (--data): %w", dir, err)
		}
	}
	release, _, err := sf.lock()
	defer release()
	var inUse *app.DataInUse
	if errors.As(err, &inUse) {
		return "", nil, fmt.Errorf("%w: stop the server first", err)
	}
	if err != nil {
		return "", nil, err
	}
	store, _, err := sf.open(ctx)
	if err != nil {
		return "", nil, err
	}
	defer store.Close()
	token := brabo.NewToken()
	var admin *brabo.Member
	err = store.Update(ctx, func(tx brabo.Tx) error {
		admins, err := tx.Admins(ctx)
		if err != nil {
			return err
		}
		if len(admins) == 0 {
			return errors.New("the database has no admin member: start brabo serve, which creates one and prints its token")
		}
		admin = admins[0]
		return tx.SetMemberToken(ctx, admin.ID, brabo.HashToken(token), time.Now().UTC())
	})
	return token, admin, err
}
