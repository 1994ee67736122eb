// Package deptest keeps the package arrows in STYLE.md true: each package's
// TestDeps calls Check with the sibling packages it may import, and any other
// import of this module's packages from non-test files fails the test. Its
// own tests check the module as a whole: the import rules against third-party
// modules, and that every slog attribute key is a named constant.
package deptest
