package sandbox

import (
	"fmt"
	"os"
)

// UserName is the name of the command's user inside the sandbox, whatever
// its uid (DefaultUID under root, the server's own uid otherwise): the
// sandbox's /etc/passwd names it, with HOME at Home and /bin/sh, and its
// /etc/group names its group the same. `whoami`, ssh, npm and git find an
// account instead of a bare number (docs/sandbox.md).
const UserName = "sandbox"

// overflowID is the owner the kernel shows inside a user namespace for a
// file whose owner it does not map (root's files, for one): listed as
// nobody and nogroup so that `ls -l` names it.
const overflowID = 65534

// identity returns the sandbox's /etc/passwd and /etc/group for a command
// running as uid and gid: its own entry and the overflow owner's, nothing
// of the host's (the host's accounts, names and homes are not the
// command's business). A uid that is itself the overflow id is listed
// once, as UserName.
func identity(uid, gid int) (passwd, group []byte) {
	passwd = fmt.Appendf(nil, "%s:x:%d:%d:brabo sandbox:%s:/bin/sh\n", UserName, uid, gid, Home)
	if uid != overflowID {
		passwd = fmt.Appendf(passwd, "nobody:x:%d:%d:nobody:/nonexistent:/usr/sbin/nologin\n", overflowID, overflowID)
	}
	group = fmt.Appendf(nil, "%s:x:%d:\n", UserName, gid)
	if gid != overflowID {
		group = fmt.Appendf(group, "nogroup:x:%d:\n", overflowID)
	}
	return passwd, group
}

// dataFile returns a pipe's read end holding b, to hand to bwrap as a
// --ro-bind-data descriptor: b is written and the write end closed at
// once, so bwrap reads b and then the end of the file (b is far below a
// pipe's capacity).
func dataFile(b []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = w.Write(b)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}
