// Package mock holds function-field fakes of brabo's service interfaces
// (service.go) and of brabo.Executor, for tests of the packages that
// consume them: a test sets the …Fn fields of the methods it expects,
// and a call of any other method panics naming it, so that a handler
// reaching a service the test did not plan for fails loudly. Only _test.go
// files import this package (imports_test.go).
package mock
