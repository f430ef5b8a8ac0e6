package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/brabo-dev/brabo"
	brabohttp "github.com/brabo-dev/brabo/http"
)

const adminUsage = `usage: brabo admin token [--data .brabo] [--db postgres://…]

  token   issue a new admin token; the old one (and the admin's web
          sessions) stop working. On SQLite it needs the data folder, and
          the server must be stopped first; on PostgreSQL it needs the
          database URL, and running servers drop the old token at once.
`

// runAdmin is `brabo admin`: the operator's way back in when the admin
// token printed on the first start is lost.
func runAdmin(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "token" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, adminUsage)
			return 0
		}
		fmt.Fprint(stderr, adminUsage)
		return exitUsage
	}
	fl := flag.NewFlagSet("admin token", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var sf storeFlags
	sf.register(fl)
	if err := fl.Parse(args[1:]); err != nil || !noArgs(fl, stderr) {
		return exitUsage
	}
	token, admin, err := adminToken(context.Background(), sf)
	if err != nil {
		fmt.Fprintf(stderr, "brabo admin token: %v\n", err)
		return 1
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
		if _, err := os.Stat(filepath.Join(sf.data, "brabo.db")); err != nil {
			return "", nil, fmt.Errorf("no database in the data folder %s (--data): %w", sf.data, err)
		}
	}
	release, _, err := sf.lock()
	defer release()
	var inUse *dataInUse
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
	token := brabohttp.NewToken()
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
		return tx.SetMemberToken(ctx, admin.ID, brabohttp.HashToken(token), time.Now().UTC())
	})
	return token, admin, err
}
