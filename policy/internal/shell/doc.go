// Package shell is brabo's shell analyzer: it reads one bash command line
// as bash would and splits it into the programs it would run (DESIGN §4.3,
// §9), each a Segment with its words, the folders it may run in, the
// paths it reads and writes, and why it cannot be known statically when
// it cannot. Analyze is the entry point; policy applies the rules, the
// path scope, the protected table and the caps to what it returns.
//
// The analysis is pure: it reads no file, runs nothing and reads no
// clock, and it is held to policy's import rules (imports_test.go). Its
// other exported names are the tables and helpers policy's checks read
// the segments with (the operand and option tables, the effects table);
// the package is internal to policy so that nothing else depends on them.
//
// The bash differential tests (bashdiff_*_test.go) run generated lines
// through policy.Decide and through real bash under strace, and fail when
// bash runs a program the analysis did not see.
package shell
