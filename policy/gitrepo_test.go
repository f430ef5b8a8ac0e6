package policy

import "testing"

// Git's repository operands and options are paths when
// they name a folder on this machine.
func TestClassGitRepositoryOperands(t *testing.T) {
	allow := []string{"Terminal(git)"}
	var rows []row
	for _, c := range []struct{ name, cmd string }{
		{"git remote show of a folder outside", "git remote show ../outside/remote.git"},
		{"git remote show of an absolute folder", "git remote show /srv/repo.git"},
		{"git clone of a folder outside", "git clone ../x y"},
		{"git clone of a file:// URL", "git clone file:///srv/repo.git y"},
		{"git fetch of an absolute path", "git fetch /abs/path main"},
		{"git pull of a folder outside", "git pull ../other main"},
		{"git ls-remote of the home folder", "git ls-remote ~/repo"},
		{"git clone --reference outside", "git clone --reference=/srv/cache https://example.com/r.git y"},
		{"git clone --reference as the next word", "git clone --reference /srv/cache https://example.com/r.git y"},
		{"git clone --separate-git-dir outside", "git clone --separate-git-dir=/tmp/g https://example.com/r.git y"},
		{"git -C a folder outside", "git -C ../other status"},
		{"git --git-dir outside", "git --git-dir=/srv/r.git log"},
		{"git --work-tree outside", "git --work-tree=/etc status"},
		{"git archive --remote outside", "git archive --remote=../r HEAD"},
		{"git submodule add of a folder outside", "git submodule add ../../x sub"},
	} {
		rows = append(rows, row{name: "class 6: " + c.name + " meets the scope", allow: allow, cmd: c.cmd, want: RA})
	}
	rows = append(rows,
		row{name: "class 6: git fetch origin is a remote's name", allow: allow, cmd: "git fetch origin main", want: A},
		row{name: "class 6: git remote show origin is a remote's name", allow: allow, cmd: "git remote show origin", want: A},
		row{name: "class 6: git ls-remote of an https URL", allow: allow, cmd: "git ls-remote https://example.com/r.git", want: A},
		row{name: "class 6: git fetch of a folder inside the project", allow: allow, cmd: "git fetch ./vendor/r main", want: A},
		row{name: "class 6: git fetch of an ssh remote", allow: allow, cmd: "git fetch git@example.com:o/r.git", want: A},
	)
	runRowsLoose(t, rows)
}
